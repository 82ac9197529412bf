package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no store", []string{"serve"}, "--store is required"},
		{"all interfaces without token", []string{"serve", "--store", dir, "--addr", ":0"}, "give --token"},
		{"public address without token", []string{"serve", "--store", dir, "--addr", "192.0.2.1:8080"}, "give --token"},
		{"bad address", []string{"serve", "--store", dir, "--addr", "nocolon"}, "--addr nocolon"},
		{"replay without folder", []string{"serve", "--store", dir, "--llm", "replay"}, "--replay DIR"},
		{"unknown store scheme", []string{"serve", "--store", "mysql://x/y"}, `unknown scheme "mysql"`},
		{"extra argument", []string{"serve", "--store", dir, "extra"}, `unexpected argument "extra"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, errb := newTestCLI()
			if code := c.main(context.Background(), tc.args); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr %q lacks %q", errb, tc.want)
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true, "127.1.2.3:0": true,
		":8080": false, "0.0.0.0:80": false, "[::]:80": false, "192.168.1.2:80": false, "example.com:80": false,
	} {
		if got, err := isLoopback(addr); err != nil || got != want {
			t.Errorf("isLoopback(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
}

// TestServeFolder serves a folder holding a finished demo session and a
// paused replay session, lists both through the API, answers the paused
// one, and stops on cancellation with exit 0.
func TestServeFolder(t *testing.T) {
	root := t.TempDir()
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"demo", "--quiet", "--dir", filepath.Join(root, "demo")}); code != exitOK {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(context.Background(), []string{"run", "--quiet", "--spec", "demo/spec.md", "--gaps", "demo/gaps.md",
		"--dir", filepath.Join(root, "paused"), "--llm", "replay", "--replay", "demo/replay"}); code != exitPaused {
		t.Fatalf("run: exit %d, want %d\n%s\n%s", code, exitPaused, out, errb)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var serveErr bytes.Buffer
	c = &cli{stdin: strings.NewReader(""), stdout: pw, stderr: &serveErr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- c.main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--store", root, "--llm", "replay", "--replay", "demo/replay"})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v (stderr %s)", err, serveErr.String())
	}
	go io.Copy(io.Discard, pr)
	base := strings.TrimSuffix(strings.Fields(strings.SplitN(line, "console at ", 2)[1])[0], "/")

	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(base + "/api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		ID, Outcome string
		Pending     int
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := map[string]string{}
	for _, s := range list {
		got[s.ID] = s.Outcome
	}
	if got["demo"] != "COMPLETE" || got["paused"] != "PAUSED" || len(got) != 2 {
		t.Fatalf("sessions: %+v, want demo COMPLETE and paused PAUSED", list)
	}

	resp, err = client.Get(base + "/api/sessions/paused")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Pending []struct {
			ID      string `json:"id"`
			Default string `json:"default"`
		} `json:"pending"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || len(st.Pending) == 0 {
		t.Fatalf("paused status: %v, %+v", err, st)
	}
	resp.Body.Close()
	body, _ := json.Marshal(map[string]string{"question": st.Pending[0].ID, "key": st.Pending[0].Default})
	resp, err = client.Post(base+"/api/sessions/paused/answers", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("answer: %d %s", resp.StatusCode, b)
	}

	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("serve exit %d, want 0; stderr:\n%s", code, serveErr.String())
	}
}

// serve drives sessions in any store, SQLite included.
func TestServeSQLiteStore(t *testing.T) {
	c, _, _ := newTestCLI()
	b, err := c.serveBackend(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id, st, err := b.Create(context.Background())
	if err != nil || id == "" {
		t.Fatalf("Create = %q, %v", id, err)
	}
	st.(io.Closer).Close()
	list, err := b.Sessions(context.Background())
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("Sessions = %+v, %v", list, err)
	}
}

// The console refuses a foreign Host (DNS rebinding) and answers to its
// own address and to --allowed-host names.
func TestServeRefusesForeignHost(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var serveErr bytes.Buffer
	c := &cli{stdin: strings.NewReader(""), stdout: pw, stderr: &serveErr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- c.main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--store", t.TempDir(), "--allowed-host", "refine.example.com"})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v (stderr %s)", err, serveErr.String())
	}
	go io.Copy(io.Discard, pr)
	base := strings.TrimSuffix(strings.Fields(strings.SplitN(line, "console at ", 2)[1])[0], "/")
	port := base[strings.LastIndex(base, ":")+1:]
	client := &http.Client{Timeout: 30 * time.Second}
	for host, want := range map[string]int{
		"evil.example:" + port:    http.StatusForbidden,
		"localhost:" + port:       http.StatusOK,
		"127.0.0.1:" + port:       http.StatusOK,
		"refine.example.com":      http.StatusOK,
		"evil.refine.example.com": http.StatusForbidden,
		"localhost:" + port + "0": http.StatusForbidden,
	} {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/sessions", nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("serve exit %d, want 0; stderr:\n%s", code, serveErr.String())
	}
}
