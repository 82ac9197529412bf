package refinetemporal

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/temporal/internal/devserver"
)

// BenchmarkDevServer plays issue #30's session (5 rounds of Engineer and
// Reviewer, 20 ms roles: costSession) as a workflow on a local dev server
// and the same session in process, alternately, one at a time and 20 at
// once, without and with a mirror (a memory store), and reports
// temporal/in-process: the wall time of the sessions on the server ÷ in
// process; and what one session's history holds. "server=default" is the
// dev server as `temporal server start-dev` starts it;
// "server=eager-activities" turns on the server's eager activity
// dispatch (system.enableActivityEagerExecution), which hands a
// scheduled activity to the worker that completed the workflow task, in
// its reply, instead of through the task queue; "server=one-partition"
// gives each task queue one partition instead of four.
//
// nice -n 19 go test -run '^$' -bench BenchmarkDevServer -benchtime 5x ./
func BenchmarkDevServer(b *testing.B) {
	const latency = 20 * time.Millisecond
	for _, server := range []struct {
		name   string
		config []string
	}{
		{"server=default", nil},
		{"server=eager-activities", []string{"system.enableActivityEagerExecution=true"}},
		{"server=one-partition", []string{"matching.numTaskqueueReadPartitions=1", "matching.numTaskqueueWritePartitions=1"}},
	} {
		b.Run(server.name, func(b *testing.B) {
			addr := devserver.Start(b, server.config...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(cl.Close) // after the worker's Stop
			const queue = "refine-bench"
			role := latencyRole{latency: latency}
			startCostWorker(b, cl, queue, role, memory.NewBackend())
			warm := costSession()
			runOnServer(b, ctx, cl, queue, "warm-up", warm, 1)

			for _, sessions := range []int{1, 20} {
				for _, mirror := range []bool{false, true} {
					name := fmt.Sprintf("sessions=%d/mirror=%t", sessions, mirror)
					b.Run(name, func(b *testing.B) {
						in := costSession()
						in.Mirror = mirror
						var inProcess, onServer time.Duration
						runs := 0
						prefix := ""
						for b.Loop() {
							inProcess += runInProcess(b, in, role, sessions)
							prefix = fmt.Sprintf("bench-%d-%t-%d", sessions, mirror, runs)
							onServer += runOnServer(b, ctx, cl, queue, prefix, in, sessions)
							runs++
						}
						b.ReportMetric(float64(onServer)/float64(inProcess), "temporal/in-process")
						b.ReportMetric(float64(onServer.Milliseconds())/float64(runs), "ms-temporal/op")
						b.ReportMetric(float64(inProcess.Milliseconds())/float64(runs), "ms-in-process/op")
						id := prefix + "-0"
						cost := costOf(fetchHistory(b, ctx, cl, id, cl.GetWorkflow(ctx, id, "").GetRunID()))
						b.ReportMetric(float64(cost.Events), "events/session")
						b.ReportMetric(float64(cost.WorkflowTasks), "workflow-tasks/session")
						b.ReportMetric(float64(cost.CallRole+cost.Mirror), "activities/session")
						b.ReportMetric(float64(cost.Markers), "markers/session")
					})
				}
			}
		})
	}
}
