package termtexttest_test

import (
	"testing"

	"github.com/refine-spec/refine/internal/termtext"
	"github.com/refine-spec/refine/internal/termtext/termtexttest"
	"github.com/refine-spec/refine/store/memory"
)

func TestSessionCarriesTheCorpus(t *testing.T) {
	st := termtexttest.Session(t, memory.New())
	shown := st.Gaps[0].Title + "\n" + st.Pending[0].Body
	termtexttest.Check(t, "Escape", termtexttest.Text, termtext.Escape(shown))
	termtexttest.Check(t, "Markup", termtexttest.Markup, string(termtext.Markup([]byte(shown))))
}
