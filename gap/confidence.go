package gap

// Confidence grades how sure something is, as the spec writes it: an
// Engineer's "**Confidence:**" statement, a conflict detection, a root
// cause or a prompt adjustment of a rollback. Every package that grades
// confidence uses this type.
type Confidence string

// The three confidence levels.
const (
	ConfidenceHigh   Confidence = "HIGH"
	ConfidenceMedium Confidence = "MEDIUM"
	ConfidenceLow    Confidence = "LOW"
)

// Known reports whether c is one of the three levels. A value parsed from
// a role's output may hold other text, kept as written.
func (c Confidence) Known() bool {
	switch c {
	case ConfidenceHigh, ConfidenceMedium, ConfidenceLow:
		return true
	}
	return false
}
