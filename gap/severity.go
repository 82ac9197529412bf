package gap

import (
	"fmt"
	"strings"
)

// Severity ranks how much a gap or issue matters (GAP-FLOW-012). The zero
// value is not a severity; ordering follows importance: Low < Medium < High <
// Critical.
type Severity int

// The four severities of GAP-FLOW-012.
const (
	Low      Severity = iota + 1 // polish
	Medium                       // suboptimal design; the default for new gaps
	High                         // would cause an incorrect implementation
	Critical                     // spec-breaking
)

// severities lists every severity from most to least important. It is an
// array, not a slice, so no caller can change it.
var severities = [...]Severity{Critical, High, Medium, Low}

// All returns the severities from most to least important.
func All() []Severity { return severities[:] }

// String returns the spec's upper-case name ("CRITICAL").
func (s Severity) String() string {
	switch s {
	case Critical:
		return "CRITICAL"
	case High:
		return "HIGH"
	case Medium:
		return "MEDIUM"
	case Low:
		return "LOW"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Valid reports whether s is one of the four severities.
func (s Severity) Valid() bool { return s >= Low && s <= Critical }

// AtLeastHigh reports whether s is HIGH or CRITICAL: the severities that
// block acceptance and make disagreement a conflict.
func (s Severity) AtLeastHigh() bool { return s >= High }

// ParseSeverity reads a severity name, case-insensitively and ignoring
// surrounding space ("high", " CRITICAL ").
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CRITICAL":
		return Critical, nil
	case "HIGH":
		return High, nil
	case "MEDIUM":
		return Medium, nil
	case "LOW":
		return Low, nil
	}
	return 0, fmt.Errorf("gap: unknown severity %q: want CRITICAL, HIGH, MEDIUM or LOW", s)
}

// MarshalText writes the severity's name, so JSON holds "HIGH", not 3.
func (s Severity) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("gap: cannot encode invalid severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Weights gives each severity its weight in weighted convergence metrics
// (Weighted Net = Σw(resolved) − Σw(new) − Σw(reopened), so resolving one
// HIGH gap outweighs two new LOW ones). Defaults are CRITICAL=16, HIGH=4,
// MEDIUM=2, LOW=1.
type Weights struct {
	Critical int `json:"critical"`
	High     int `json:"high"`
	Medium   int `json:"medium"`
	Low      int `json:"low"`
}

// DefaultWeights returns the default severity weights.
func DefaultWeights() Weights { return Weights{Critical: 16, High: 4, Medium: 2, Low: 1} }

// UnitWeights gives every severity weight 1, which makes weighted metrics
// equal to plain counts (the spec's original, unweighted FLOW-002).
func UnitWeights() Weights { return Weights{Critical: 1, High: 1, Medium: 1, Low: 1} }

// Of returns the weight of s; an invalid severity weighs as MEDIUM.
func (w Weights) Of(s Severity) int {
	switch s {
	case Critical:
		return w.Critical
	case High:
		return w.High
	case Low:
		return w.Low
	}
	return w.Medium
}

// Validate checks that every weight is positive and that the weights are
// ordered CRITICAL ≥ HIGH ≥ MEDIUM ≥ LOW.
func (w Weights) Validate() error {
	for _, s := range severities {
		if w.Of(s) <= 0 {
			return fmt.Errorf("gap: severity weight %s is %d: weights must be positive", s, w.Of(s))
		}
	}
	if !(w.Critical >= w.High && w.High >= w.Medium && w.Medium >= w.Low) {
		return fmt.Errorf("gap: severity weights %d/%d/%d/%d are not ordered CRITICAL >= HIGH >= MEDIUM >= LOW", w.Critical, w.High, w.Medium, w.Low)
	}
	return nil
}
