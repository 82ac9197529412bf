package render

// OneLine makes s one line of at most 300 runes: line breaks and table
// bars become spaces, and a longer text ends in "...".
func OneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '|' {
			r = ' '
		}
		out = append(out, r)
	}
	if len(out) > 300 {
		out = append(out[:297], '.', '.', '.')
	}
	return string(out)
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// JoinIDs joins ids with commas.
func JoinIDs[T ~string](ids []T) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += string(id)
	}
	return out
}
