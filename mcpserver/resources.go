package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/store"
)

// URIs of a session's files: refine://sessions/{id}/status.md,
// decisions.md, final_spec.md, final_summary.md, status.json, and
// refine://sessions/{id}/rounds/{round}/engineer.md, reviewer.md,
// summary.md.
const uriPrefix = "refine://sessions/"

// sessionFiles are the session-level files, in listing order; status.json
// is rendered from the status, the others are the store's keys.
var sessionFiles = []struct{ name, title, mime string }{
	{"status.md", "status: gaps, convergence, validation log, conflicts, rollbacks", "text/markdown"},
	{"decisions.md", "decisions and conflict resolutions", "text/markdown"},
	{"status.json", "status as JSON (the refine status --json document)", "application/json"},
	{"final_spec.md", "the refined spec", "text/markdown"},
	{"final_summary.md", "outcome, gap summary and known limitations", "text/markdown"},
}

// alwaysListed are listed from a session's start; the others once they exist.
var alwaysListed = map[string]bool{"status.md": true, "decisions.md": true, "status.json": true}

var roundFiles = map[string]string{"engineer.md": "accepted Engineer output", "reviewer.md": "accepted Reviewer output", "summary.md": "the round's synthesis"}

var roundKey = regexp.MustCompile(`^round_(\d{3})/(engineer|reviewer|summary)\.md$`)

func (s *Server) addResourceTemplates() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{Name: "session-file", Title: "A session's file",
		URITemplate: uriPrefix + "{id}/{file}", MIMEType: "text/markdown",
		Description: "A session's status.md, decisions.md, final_spec.md, final_summary.md or status.json"}, s.readResource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{Name: "round-file", Title: "A round's file",
		URITemplate: uriPrefix + "{id}/rounds/{round}/{file}", MIMEType: "text/markdown",
		Description: "A round's engineer.md, reviewer.md or summary.md (round as a number)"}, s.readResource)
}

// resourceKey maps a resource URI to its session and store key ("" key
// for status.json).
func resourceKey(uri string) (id, key string, err error) {
	rest, ok := strings.CutPrefix(uri, uriPrefix)
	if !ok {
		return "", "", fmt.Errorf("not a refine session URI: %s", uri)
	}
	parts := strings.Split(rest, "/")
	if store.ValidSessionID(parts[0]) != nil {
		return "", "", fmt.Errorf("bad session ID in %s", uri)
	}
	id = parts[0]
	switch {
	case len(parts) == 2:
		for _, f := range sessionFiles {
			if f.name == parts[1] {
				if f.name == "status.json" {
					return id, "", nil
				}
				return id, f.name, nil
			}
		}
	case len(parts) == 4 && parts[1] == "rounds":
		n, err := strconv.Atoi(parts[2])
		if _, ok := roundFiles[parts[3]]; ok && err == nil && n >= 1 && n <= 999 {
			return id, fmt.Sprintf("round_%03d/%s", n, parts[3]), nil
		}
	}
	return "", "", fmt.Errorf("no such file: %s", uri)
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, key, err := resourceKey(uri)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if key == "" {
		status, err := s.statusOf(ctx, id)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		b, err := json.MarshalIndent(statusjson.From(status), "", "  ")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	st, err := s.cfg.Backend.View(ctx, id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	defer closeStore(st)
	b, err := st.Get(ctx, key)
	if errors.Is(err, refine.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: string(b)}}}, nil
}

// registerExisting lists the sessions the store holds at start.
func (s *Server) registerExisting(ctx context.Context) error {
	list, err := s.cfg.Backend.Sessions(ctx)
	if err != nil {
		return fmt.Errorf("mcpserver: list sessions: %w", err)
	}
	for _, si := range list {
		s.register(si.ID, nil)
	}
	return nil
}

// register adds session id's resources: the files always listed, and
// those among keys (its store keys) that exist.
func (s *Server) register(id string, keys []string) {
	have := map[string]bool{}
	for _, k := range keys {
		have[k] = true
	}
	for _, f := range sessionFiles {
		if alwaysListed[f.name] || have[f.name] {
			s.addResource(uriPrefix+id+"/"+f.name, fmt.Sprintf("%s %s", id, f.name), fmt.Sprintf("Session %s: %s", id, f.title), f.mime)
		}
	}
	for _, k := range keys {
		m := roundKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		file := m[2] + ".md"
		s.addResource(fmt.Sprintf("%s%s/rounds/%d/%s", uriPrefix, id, n, file), fmt.Sprintf("%s round %d %s", id, n, file),
			fmt.Sprintf("Session %s, round %d: %s", id, n, roundFiles[file]), "text/markdown")
	}
}

func (s *Server) addResource(uri, name, desc, mime string) {
	s.mu.Lock()
	if s.resources[uri] {
		s.mu.Unlock()
		return
	}
	s.resources[uri] = true
	s.mu.Unlock()
	s.mcp.AddResource(&mcp.Resource{URI: uri, Name: name, Description: desc, MIMEType: mime}, s.readResource)
}

// sessionURIs lists the resources registered for session id.
func (s *Server) sessionURIs(_ context.Context, id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, f := range sessionFiles {
		if u := uriPrefix + id + "/" + f.name; s.resources[u] {
			out = append(out, u)
		}
	}
	return out
}

// touch tells subscribers that session id's files changed; with rescan it
// also registers the files that appeared (a round's outputs, the final
// spec), which notifies the list's change.
func (s *Server) touch(ctx context.Context, id string, rescan bool) {
	if rescan {
		if st, err := s.cfg.Backend.View(ctx, id); err == nil {
			keys, err := st.List(ctx, "")
			closeStore(st)
			if err == nil {
				s.register(id, keys)
			}
		}
	}
	for _, f := range sessionFiles {
		u := uriPrefix + id + "/" + f.name
		s.mu.Lock()
		ok := s.resources[u]
		s.mu.Unlock()
		if ok {
			_ = s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: u})
		}
	}
}

// onEvent keeps the resources current as the session moves.
func (s *Server) onEvent(ctx context.Context, id string, e refine.Event) {
	switch e.Kind {
	case refine.EventRoundFinished, refine.EventSessionFinished, refine.EventQuestionAsked:
		s.touch(ctx, id, true)
	}
}
