package einobench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// Draft is what flows through the eino graph: the round and the last
// outputs of the two roles (so a checkpoint carries what refine's
// commits carry, the calls' outputs).
type Draft struct {
	Round    int
	Engineer string
	Reviewer string
}

func init() {
	// eino serializes a checkpoint's node inputs by registered name.
	schema.RegisterName[*Draft]("refine_bench_draft")
}

// Node names of the graph.
const (
	nodeEngineer = "engineer"
	nodeReviewer = "reviewer"
)

// Graph is issue #30's session as an eino graph: Engineer then Reviewer,
// looping back to the Engineer until Rounds rounds are done, each node a
// call of latency. It interrupts after every node, so that each step's
// result is checkpointed to the store (eino writes a checkpoint only when
// a run is interrupted; none after the last node, which ends the run: 9
// a session, as issue #30's peer counted), and Run resumes it at once.
type Graph struct {
	runner  compose.Runnable[*Draft, *Draft]
	store   *FileStore
	inCalls atomic.Int64
}

// NewGraph compiles the graph with its checkpoints in dir.
func NewGraph(ctx context.Context, dir string, latency time.Duration) (*Graph, error) {
	gr := &Graph{store: &FileStore{Dir: dir}}
	g := compose.NewGraph[*Draft, *Draft]()
	engineer := func(_ context.Context, d *Draft) (*Draft, error) {
		out := *d
		out.Round++
		id := gap.ID(fmt.Sprintf("GAP-BENCH-%03d", out.Round))
		out.Engineer = timed(&gr.inCalls, latency, func() string { return refinetest.EngineerOutput(id) })
		return &out, nil
	}
	reviewer := func(_ context.Context, d *Draft) (*Draft, error) {
		out := *d
		id := gap.ID(fmt.Sprintf("GAP-BENCH-%03d", out.Round))
		out.Reviewer = timed(&gr.inCalls, latency, func() string { return refinetest.ReviewerOutput(out.Round, []gap.ID{id}) })
		return &out, nil
	}
	for _, err := range []error{
		g.AddLambdaNode(nodeEngineer, compose.InvokableLambda(engineer)),
		g.AddLambdaNode(nodeReviewer, compose.InvokableLambda(reviewer)),
		g.AddEdge(compose.START, nodeEngineer),
		g.AddEdge(nodeEngineer, nodeReviewer),
		g.AddBranch(nodeReviewer, compose.NewGraphBranch(func(_ context.Context, d *Draft) (string, error) {
			if d.Round >= Rounds {
				return compose.END, nil
			}
			return nodeEngineer, nil
		}, map[string]bool{nodeEngineer: true, compose.END: true})),
	} {
		if err != nil {
			return nil, fmt.Errorf("eino graph: %w", err)
		}
	}
	r, err := g.Compile(ctx,
		compose.WithCheckPointStore(gr.store),
		compose.WithInterruptAfterNodes([]string{nodeEngineer, nodeReviewer}),
		compose.WithMaxRunSteps(4*Rounds+4))
	if err != nil {
		return nil, fmt.Errorf("eino graph: compile: %w", err)
	}
	gr.runner = r
	return gr, nil
}

// Run plays one session under the checkpoint ID id (new to the store):
// it invokes the graph, and resumes it from its checkpoint after each
// interrupt until it ends.
func (gr *Graph) Run(ctx context.Context, id string) (Result, error) {
	gr.inCalls.Store(0)
	sets := gr.store.Sets.Load()
	start := time.Now()
	var out *Draft
	for steps := 0; ; steps++ {
		if steps > 4*Rounds {
			return Result{}, errors.New("eino session: it did not end after 4 resumes a round")
		}
		var err error
		out, err = gr.runner.Invoke(ctx, &Draft{}, compose.WithCheckPointID(id))
		if _, interrupted := compose.ExtractInterruptInfo(err); interrupted {
			continue
		}
		if err != nil {
			return Result{}, fmt.Errorf("eino session: %w", err)
		}
		break
	}
	wall := time.Since(start)
	if out.Round != Rounds || out.Reviewer == "" {
		return Result{}, fmt.Errorf("eino session: ended after round %d, want %d", out.Round, Rounds)
	}
	return Result{Wall: wall, InCalls: time.Duration(gr.inCalls.Load()), Checkpoints: int(gr.store.Sets.Load() - sets)}, nil
}

// RunEino plays one session on a graph compiled with its checkpoints in
// a new folder under dir (compiling is not timed).
func RunEino(ctx context.Context, dir string, latency time.Duration) (Result, error) {
	folder, err := os.MkdirTemp(dir, "eino-")
	if err != nil {
		return Result{}, err
	}
	g, err := NewGraph(ctx, folder, latency)
	if err != nil {
		return Result{}, err
	}
	return g.Run(ctx, "session")
}
