// Command readme is the Go example of the README, kept here so that it
// compiles with every change: it refines a one-gap spec with an
// OpenAI-compatible model, in a session folder, answering each question
// with its default.
//
//	OPENAI_API_KEY=… OPENAI_MODEL=gpt-4o-mini go run ./examples/readme
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/langchain"
	"github.com/refine-spec/refine/store/fs"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	// Any OpenAI-compatible endpoint; the key, model and base URL come
	// from OPENAI_API_KEY, OPENAI_MODEL and OPENAI_BASE_URL.
	model, err := langchain.NewOpenAI(langchain.OpenAIConfigFromEnv(langchain.OpenAIConfig{}, nil),
		langchain.WithTimeout(2*time.Minute))
	if err != nil {
		return err // no key or no model: says which variable to set
	}
	role := llm.Limit(model, 4) // at most 4 calls in flight

	st, err := fs.Open("session") // a human-readable session folder
	if err != nil {
		return err
	}
	defer st.Close() // a Session has no Close: closing its Store releases the folder

	cfg := refine.DefaultConfig() // the spec's defaults: 10 rounds, 2 retries, 3 gaps a round, …
	cfg.Store, cfg.Engineer, cfg.Reviewer = st, role, role
	cfg.Asker = refine.DeferAsker{} // questions come back in the Outcome
	cfg.Spec = "# Orders API\n\nGET /v1/orders lists orders.\n"
	cfg.Gaps = []gap.Gap{{ID: "GAP-API-001", Title: "Pagination is unspecified", Severity: gap.High}}

	s, err := refine.New(ctx, cfg) // refine.Open(ctx, cfg) resumes it, in any process
	if err != nil {
		return err
	}
	out, err := s.Run(ctx)
	for err == nil && out.Status == refine.StatusPaused && len(out.Pending) > 0 {
		q := out.Pending[0] // a conflict, a divergence warning, …: show it to a person
		if err := s.Answer(ctx, q.ID, refine.Answer{Key: q.Default}); err != nil {
			return err
		}
		out, err = s.Run(ctx)
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s after round %d: see session/final_spec.md\n", out.Status, out.Round)
	return nil
}
