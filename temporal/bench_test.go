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
// once, and reports temporal/in-process: the wall time of the sessions on
// the server ÷ in process; the server's CPU time per session; and what
// one session's history holds. "calls=activity" makes each role call an
// activity (the default), without and with a mirror (a memory store);
// "calls=local" makes them local activities (ActivitySettings.Local).
// "server=default" is the dev server as `temporal server start-dev`
// starts it; "server=eager-activities" turns on the server's eager
// activity dispatch (system.enableActivityEagerExecution, the setup the
// README recommends), which hands a scheduled activity to the worker that
// completed the workflow task, in its reply, instead of through the task
// queue; "server=one-partition" gives each task queue one partition
// instead of four.
//
// go test -run '^$' -bench BenchmarkDevServer -benchtime 3x ./
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
			srv := devserver.Run(b, server.config...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			cl, err := client.DialContext(ctx, client.Options{HostPort: srv.Addr, Logger: quiet()})
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
				for _, v := range []struct {
					calls  string
					mirror bool
				}{{"activity", false}, {"activity", true}, {"local", false}} {
					name := fmt.Sprintf("sessions=%d/calls=%s/mirror=%t", sessions, v.calls, v.mirror)
					b.Run(name, func(b *testing.B) {
						in := costSession()
						in.Mirror = v.mirror
						in.Activities.Local = v.calls == "local"
						var inProcess, onServer, serverCPU time.Duration
						runs := 0
						prefix := ""
						for b.Loop() {
							inProcess += runInProcess(b, in, role, sessions)
							prefix = fmt.Sprintf("bench-%d-%s-%t-%d", sessions, v.calls, v.mirror, runs)
							cpu0, err := srv.CPU()
							if err != nil {
								b.Fatal(err)
							}
							onServer += runOnServer(b, ctx, cl, queue, prefix, in, sessions)
							cpu1, err := srv.CPU()
							if err != nil {
								b.Fatal(err)
							}
							serverCPU += cpu1 - cpu0
							runs++
						}
						b.ReportMetric(float64(onServer)/float64(inProcess), "temporal/in-process")
						b.ReportMetric(float64(onServer.Milliseconds())/float64(runs), "ms-temporal/op")
						b.ReportMetric(float64(inProcess.Milliseconds())/float64(runs), "ms-in-process/op")
						b.ReportMetric(float64(serverCPU.Milliseconds())/float64(runs*sessions), "server-cpu-ms/session")
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
