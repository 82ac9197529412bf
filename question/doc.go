// Package question is the one vocabulary refine uses to ask its user for a
// decision: a Question with its Options, the user's Answer, and the check
// that an answer fits the question.
//
// The packages that word questions (retry's escalation, convergence's
// divergence and early-termination offers, conflict's resolutions and rate
// alerts, the rollback dialogs) build Question values directly, and the
// engine hands them to its Asker unchanged, so no package converts another's
// question type. A Question is stored as JSON while it waits for an answer
// (a paused session keeps it in its state), so its field names are part of
// the session format.
package question
