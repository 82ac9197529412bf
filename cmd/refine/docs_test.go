package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The doc-command test: the README and docs/ name only flags a command's
// help lists, and their --llm lists name the providers its help names
// (#40: `refine help` said openai|ollama|replay where the README said
// openai|anthropic|ollama|replay, and `refine mcp` had neither anthropic
// nor --engineer/--reviewer).

// docPaths are the user-facing documents, from this package's folder.
func docPaths(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs: %v", err)
	}
	return append([]string{"../../README.md"}, docs...)
}

// helpFlags are the flags `refine CMD --help` lists, and the text of its
// --llm flag.
func helpFlags(t *testing.T, cmd string) (flags map[string]bool, llm string) {
	t.Helper()
	c, out, _ := newTestCLI()
	if code := c.main(context.Background(), []string{cmd, "--help"}); code != exitOK {
		t.Fatalf("refine %s --help: exit %d", cmd, code)
	}
	flags = map[string]bool{"help": true, "h": true}
	lines := strings.Split(out.String(), "\n")
	for i, l := range lines {
		if m := helpFlag.FindStringSubmatch(l); m != nil {
			flags[m[1]] = true
			if m[1] == "llm" && i+1 < len(lines) {
				llm = lines[i+1]
			}
		}
	}
	return flags, llm
}

var (
	helpFlag = regexp.MustCompile(`^  -([a-z][a-z0-9-]*)`)
	// commandUse is "refine CMD" as a command line writes it: not
	// refine-temporal, not a word inside another.
	commandUse = regexp.MustCompile(`(?:^|[\s(\x60"'/])refine ([a-z]+)\b`)
	docFlag    = regexp.MustCompile(`(?:^|[\s\[(\x60|"])--([a-z][a-z0-9-]*)`)
	llmList    = regexp.MustCompile(`--llm ([a-z]+(?:\|[a-z]+)+)`)
	providers  = []string{"openai", "anthropic", "ollama", "replay", "sampling"}
)

// commandLines are the documents' command lines: each line naming
// `refine CMD`, from there to the end of its code span or line, with the
// indented lines that continue it in a code block; and each command's
// summary in `refine help`.
func commandLines(t *testing.T) []docLine {
	t.Helper()
	var out []docLine
	for name, cmd := range commandTable() {
		out = append(out, docLine{where: "refine help", cmd: name, text: cmd.summary})
	}
	for _, path := range docPaths(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		inCode := false
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inCode = !inCode
				continue
			}
			for _, m := range commandUse.FindAllStringSubmatchIndex(l, -1) {
				cmd := l[m[2]:m[3]]
				if _, ok := commandTable()[cmd]; !ok {
					continue
				}
				rest := l[m[3]:]
				if !inCode {
					// Prose: the code span the command is in.
					if j := strings.IndexByte(rest, '`'); j >= 0 {
						rest = rest[:j]
					}
				} else {
					for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") && strings.Contains(lines[i+1], "--") && !commandUse.MatchString(lines[i+1]) {
						i++
						rest += " " + lines[i]
					}
				}
				// A comment or another command ends this one.
				rest, _, _ = strings.Cut(rest, " # ")
				if k := commandUse.FindStringIndex(rest); k != nil {
					rest = rest[:k[0]]
				}
				out = append(out, docLine{where: filepath.Base(path) + ":" + strconv.Itoa(i+1), cmd: cmd, text: rest})
			}
		}
	}
	return out
}

type docLine struct{ where, cmd, text string }

func TestDocsNameOnlyFlagsTheHelpLists(t *testing.T) {
	type help struct {
		flags map[string]bool
		llm   string
	}
	helps := map[string]help{}
	n := 0
	for _, dl := range commandLines(t) {
		h, ok := helps[dl.cmd]
		if !ok {
			h.flags, h.llm = helpFlags(t, dl.cmd)
			helps[dl.cmd] = h
		}
		for _, m := range docFlag.FindAllStringSubmatch(dl.text, -1) {
			n++
			if !h.flags[m[1]] {
				t.Errorf("%s: refine %s --%s: not a flag of refine %s --help (%q)", dl.where, dl.cmd, m[1], dl.cmd, strings.TrimSpace(dl.text))
			}
		}
		for _, m := range llmList.FindAllStringSubmatch(dl.text, -1) {
			listed := strings.Split(m[1], "|")
			for _, p := range providers {
				inHelp := strings.Contains(h.llm, p)
				if slices.Contains(listed, p) && !inHelp {
					t.Errorf("%s: refine %s --llm lists %s, which its help does not", dl.where, dl.cmd, p)
				}
				if !slices.Contains(listed, p) && inHelp && p != "sampling" {
					t.Errorf("%s: refine %s --llm %s leaves out %s, which its help names", dl.where, dl.cmd, m[1], p)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d flags found in the docs' command lines; is the scan still right?", n)
	}
}

// Item 13: the README's JSON snippets parse, and a server entry running
// refine names only flags `refine mcp --help` lists.
func TestReadmeMCPSnippets(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flags, _ := helpFlags(t, "mcp")
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	servers := 0
	for _, blk := range blocks {
		var doc any
		if err := json.Unmarshal([]byte(blk[1]), &doc); err != nil {
			t.Errorf("a README JSON snippet does not parse: %v\n%s", err, blk[1])
			continue
		}
		for _, srv := range mcpServers(doc) {
			if srv.Command != "refine" {
				continue
			}
			servers++
			if len(srv.Args) == 0 || srv.Args[0] != "mcp" {
				t.Errorf("a server entry runs refine without mcp: %v", srv.Args)
				continue
			}
			for _, a := range srv.Args[1:] {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if strings.HasPrefix(a, "-") && !flags[name] {
					t.Errorf("a server entry passes %s, which refine mcp --help does not list", a)
				}
			}
		}
	}
	if servers < 2 {
		t.Errorf("the README's JSON has %d refine server entries; want the hosts' entry (Claude Desktop, Cursor) and a server-side backend's", servers)
	}
	for _, want := range []string{"claude mcp add", "Claude Desktop", "Cursor", "sampling", "elicitation"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the README's MCP section lacks %q", want)
		}
	}
}

type mcpServer struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// mcpServers finds the server entries of a client's configuration: the
// values of its "mcpServers" (Claude Desktop, Cursor) or "servers" (VS
// Code) object.
func mcpServers(doc any) []mcpServer {
	var out []mcpServer
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				if k == "mcpServers" || k == "servers" {
					if m, ok := sub.(map[string]any); ok {
						for _, e := range m {
							b, _ := json.Marshal(e)
							var s mcpServer
							if json.Unmarshal(b, &s) == nil {
								out = append(out, s)
							}
						}
					}
				}
				walk(sub)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}
