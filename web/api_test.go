package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
)

// TestAPIDrivesDemoToComplete answers every question through the API, as a
// script would, and follows the session to COMPLETE.
func TestAPIDrivesDemoToComplete(t *testing.T) {
	f := newFixture(t, "")
	var asked []string
	for i := 0; ; i++ {
		if i > 20 {
			t.Fatalf("still not finished after %d answers: %v", i, asked)
		}
		resp, body := f.get("/api/sessions/" + f.id)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET status: %d %s", resp.StatusCode, body)
		}
		var st statusjson.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Pending) == 0 {
			if st.Outcome != string(refine.StatusComplete) {
				t.Fatalf("outcome %s with nothing pending after %v", st.Outcome, asked)
			}
			break
		}
		for _, p := range []string{"/", "/sessions/" + f.id, "/sessions/" + f.id + "/rounds/1"} {
			if resp, body := f.get(p); resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s after %v: %d\n%s", p, asked, resp.StatusCode, body)
			}
		}
		q := f.status().Pending[0]
		asked = append(asked, string(q.Kind)+"/"+q.ID)
		a := demoAnswer(q)
		resp, body = f.do(http.MethodPost, "/api/sessions/"+f.id+"/answers", "application/json", answerBody(q.ID, a.Key, a.Text))
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("answer %s %+v: %d %s", q.ID, a, resp.StatusCode, body)
		}
		f.wait()
	}
	t.Logf("questions: %s", strings.Join(asked, ", "))
}
