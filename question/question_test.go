package question

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sample() Question {
	return Question{
		ID: "r3-conflict", Kind: KindConflict, Round: 3, Title: "Conflict: ISSUE-R2-001 (HIGH)",
		Body: "The Engineer disagrees.\n",
		Options: []Option{
			{Key: "A", Label: "Reviewer Position", Effect: "reviewer", Recommended: true},
			{Key: "B", Label: "Engineer Position", Effect: "engineer"},
			{Key: "D", Label: "User Specifies Alternative", Effect: "user_specified"},
		},
		AllowText: true, Default: "A", TextRequired: []string{"D"},
	}
}

func TestCheck(t *testing.T) {
	noText := Question{ID: "q1", Options: []Option{{Key: "yes"}, {Key: "no"}}}
	tests := []struct {
		name string
		q    Question
		a    Answer
		want string // "" for valid
	}{
		{"offered", sample(), Answer{Key: "B"}, ""},
		{"key differing only in case", sample(), Answer{Key: "b"}, `question r3-conflict offers A, B, D, not "b"`},
		{"not offered", sample(), Answer{Key: "C"}, `question r3-conflict offers A, B, D, not "C"`},
		{"needs text", sample(), Answer{Key: "D", Text: " \n"}, `option D of question r3-conflict needs text (answer "D: your text")`},
		{"with text", sample(), Answer{Key: "D", Text: "Check the header."}, ""},
		{"no free text", noText, Answer{Key: "yes", Text: "because"}, "question q1 takes no free text"},
		{"free-form question", Question{ID: "q2", AllowText: true}, Answer{Text: "anything"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.q.Check(tt.a)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalidAnswer) {
				t.Fatalf("Check = %v, want ErrInvalidAnswer containing %q", err, tt.want)
			}
		})
	}
}

func TestOption(t *testing.T) {
	q := sample()
	if o, ok := q.Option("A"); !ok || o.Key != "A" || o.Effect != "reviewer" {
		t.Errorf("Option(A) = %+v, %v", o, ok)
	}
	if _, ok := q.Option("a"); ok {
		t.Error("Option(a) found option A: keys match exactly")
	}
	for key, want := range map[string]string{"a": "A", "A": "A", "d": "D", "z": "z"} {
		if got := q.CanonicalKey(key); got != want {
			t.Errorf("CanonicalKey(%q) = %q, want %q", key, got, want)
		}
	}
	if _, ok := q.Option("Z"); ok {
		t.Error("Option(Z) found")
	}
	if diff := cmp.Diff([]string{"A", "B", "D"}, q.Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
}

// A pending question is stored in state.json: these names are the format.
func TestJSONShape(t *testing.T) {
	b, err := json.Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"r3-conflict","kind":"conflict","round":3,"title":"Conflict: ISSUE-R2-001 (HIGH)","body":"The Engineer disagrees.\n","options":[{"key":"A","label":"Reviewer Position","effect":"reviewer","recommended":true},{"key":"B","label":"Engineer Position","effect":"engineer"},{"key":"D","label":"User Specifies Alternative","effect":"user_specified"}],"allow_text":true,"default":"A","text_required":["D"]}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	var back Question
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample(), back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	a, _ := json.Marshal(Answer{Key: "A"})
	if string(a) != `{"key":"A"}` {
		t.Errorf("answer JSON %s", a)
	}
}

func TestText(t *testing.T) {
	want := `Conflict: ISSUE-R2-001 (HIGH)

The Engineer disagrees.

Options:
A. Reviewer Position (RECOMMENDED)
B. Engineer Position
D. User Specifies Alternative
`
	if diff := cmp.Diff(want, sample().Text()); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
	if got := (Question{Body: "Just this.\n\n"}).Text(); got != "Just this.\n\n" {
		t.Errorf("body only: %q", got)
	}
}

func TestMenu(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"numbered with effects", []Option{{Key: "1", Label: "Continue", Effect: "Next round"}, {Key: "2", Label: "Pause"}},
			"1. Continue\n   Effect: Next round\n\n2. Pause\n\nChoose an option (1-2): ___"},
		{"one option", []Option{{Key: "1", Label: "Go"}}, "1. Go\n\nChoose an option (1): ___"},
		{"none", nil, "Answer in your own words: ___"},
		// Keys that are not consecutive numbers are named, not read as a
		// range: "(appendix-pause)" offered a key that does not exist (#40).
		{"named keys", []Option{{Key: "appendix", Label: "Keep"}, {Key: "retry", Label: "Retry"}, {Key: "pause", Label: "Pause"}},
			"appendix. Keep\n\nretry. Retry\n\npause. Pause\n\nChoose an option (appendix, retry or pause): ___"},
		{"numbers and a name", []Option{{Key: "1", Label: "A"}, {Key: "2", Label: "B"}, {Key: "3", Label: "C"}, {Key: "cancel", Label: "Cancel"}},
			"1. A\n\n2. B\n\n3. C\n\ncancel. Cancel\n\nChoose an option (1-3 or cancel): ___"},
		{"a gap in the numbers", []Option{{Key: "1", Label: "A"}, {Key: "2", Label: "B"}, {Key: "4", Label: "D"}},
			"1. A\n\n2. B\n\n4. D\n\nChoose an option (1-2 or 4): ___"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Menu(tt.opts)); diff != "" {
				t.Errorf("Menu (-want +got):\n%s", diff)
			}
		})
	}
}
