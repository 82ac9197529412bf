package core

// StoreCaps are the capabilities of a session's Store the decisions'
// writes may use: appends (store.Appender) and copies (store.Copier).
type StoreCaps struct{ Appends, Copies bool }
