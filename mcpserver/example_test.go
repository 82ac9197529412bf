package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine/mcpserver"
	"github.com/refine-spec/refine/store/memory"
)

// Serve refine over MCP and list its tools from a client. A host runs
// srv.MCP() on &mcp.StdioTransport{} (what `refine mcp` does) or serves
// srv.HTTPHandler over HTTP.
func Example() {
	ctx := context.Background()
	srv, err := mcpserver.New(mcpserver.Config{Backend: memory.NewBackend()})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Println(t.Name)
	}
	// Output:
	// refine_abandon
	// refine_answer
	// refine_approve
	// refine_continue
	// refine_rollback
	// refine_sessions
	// refine_start
	// refine_status
	// refine_validate
}
