package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func TestAnswerAPIErrors(t *testing.T) {
	f := newFixture(t, "")
	q := f.status().Pending[0]
	var keys []string
	for _, o := range q.Options {
		keys = append(keys, o.Key)
	}
	path := "/api/sessions/" + f.id + "/answers"
	for _, tc := range []struct {
		name, ctype, body string
		code              int
		want              string
	}{
		{"unknown option", "application/json", answerBody(q.ID, "Z9", ""), http.StatusBadRequest, "offers"},
		{"unknown question", "application/json", answerBody("no-such-question", "A", ""), http.StatusConflict, "not pending"},
		{"missing key", "application/json", `{"question":"` + q.ID + `"}`, http.StatusBadRequest, `key`},
		{"not JSON", "application/json", `question=x`, http.StatusBadRequest, "JSON"},
		{"unknown field", "application/json", `{"question":"x","key":"A","extra":1}`, http.StatusBadRequest, "extra"},
		{"two values", "application/json", answerBody(q.ID, "Z9", "") + `{}`, http.StatusBadRequest, "more than one"},
		{"form content type", "application/x-www-form-urlencoded", answerBody(q.ID, "A", ""), http.StatusBadRequest, "Content-Type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(http.MethodPost, path, tc.ctype, tc.body)
			if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s; want %d with %q", resp.StatusCode, body, tc.code, tc.want)
			}
			var e apiError
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
				t.Fatalf("error body %q is not {\"error\": …}: %v", body, err)
			}
			if tc.name == "unknown option" {
				if diff := cmp.Diff(keys, e.Offered); diff != "" {
					t.Errorf("offered keys (-want +got):\n%s", diff)
				}
			}
		})
	}
	if st := f.status(); st.Pending[0].ID != q.ID {
		t.Errorf("a refused answer changed the session")
	}
}

// TestRacingAnswers: of many answers to one question sent at once, exactly
// one is taken; the others get 409.
func TestRacingAnswers(t *testing.T) {
	f := newFixture(t, "")
	q := f.status().Pending[0]
	a := demoAnswer(q)
	const n = 8
	codes := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest(http.MethodPost, f.http.URL+"/api/sessions/"+f.id+"/answers", strings.NewReader(answerBody(q.ID, a.Key, a.Text)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	f.wait()
	slices.Sort(codes)
	want := []int{http.StatusAccepted}
	for range n - 1 {
		want = append(want, http.StatusConflict)
	}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("status codes (-want +got):\n%s", diff)
	}
}

func TestRollbackAPI(t *testing.T) {
	f := newFixture(t, "")
	path := "/api/sessions/" + f.id + "/rollback"
	round := f.status().Round
	if round < 1 {
		t.Fatalf("fixture paused at round %d; the test needs a finished round", round)
	}
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"reason":"x"}`, http.StatusBadRequest},
		{`{"to":0}`, http.StatusBadRequest},
		{`{"to":-1,"reason":"x"}`, http.StatusBadRequest},
	} {
		resp, body := f.do(http.MethodPost, path, "application/json", tc.body)
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d, want %d\n%s", tc.body, resp.StatusCode, tc.code, body)
		}
	}
	resp, body := f.do(http.MethodPost, path, "application/json", `{"to":0,"reason":"start over with narrower scope"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("rollback: %d\n%s", resp.StatusCode, body)
	}
	var rep rollbackJSON
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	f.wait()
	if len(rep.Pending) > 0 {
		// Another rollback while this one waits: refused, naming it (#40).
		resp, body := f.do(http.MethodPost, path, "application/json", `{"to":0,"reason":"something else"}`)
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "start over with narrower scope") {
			t.Errorf("a second rollback while one waits: %d, want 409 naming the waiting one\n%s", resp.StatusCode, body)
		}
	}
	// An interactive session asks how to retry first: answer with the
	// first option (retry with the same prompt) until the rollback is done.
	for i := 0; len(rep.Undone) == 0 && len(rep.Pending) > 0; i++ {
		if i > 3 {
			t.Fatalf("rollback still asking after %d answers: %+v", i, rep)
		}
		q := rep.Pending[0]
		resp, body := f.do(http.MethodPost, "/api/sessions/"+f.id+"/answers", "application/json", answerBody(q.ID, q.Options[0].Key, "narrow it"))
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("answer %s: %d %s", q.ID, resp.StatusCode, body)
		}
		f.wait()
		st := f.status()
		if len(st.Rollbacks) > 0 {
			break
		}
		rep.Pending = nil
		for _, p := range st.Pending {
			if p.Kind == "rollback" {
				rep.Pending = append(rep.Pending, statusjson.PendingOf(p))
			}
		}
	}
	st := f.status()
	if len(st.Rollbacks) == 0 || st.Rollbacks[len(st.Rollbacks)-1].Reason != "start over with narrower scope" {
		t.Fatalf("rollback history %+v", st.Rollbacks)
	}
	_, page := f.get("/sessions/" + f.id)
	if !strings.Contains(page, "start over with narrower scope") {
		t.Error("the session page does not show the rollback")
	}
	// A second rollback request while one waits, or a target beyond the
	// session, is refused without changing anything.
	resp, body = f.do(http.MethodPost, path, "application/json", `{"to":50,"reason":"x"}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("rollback beyond the session: %d %s", resp.StatusCode, body)
	}
}

func TestRollbackForm(t *testing.T) {
	f := newFixture(t, "")
	resp, body := f.do(http.MethodPost, "/sessions/"+f.id+"/rollback", "application/x-www-form-urlencoded", "to=0&reason=")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("rollback without reason: %d\n%s", resp.StatusCode, body)
	}
	resp, body = f.do(http.MethodPost, "/sessions/"+f.id+"/rollback", "application/x-www-form-urlencoded", "to=0&reason=too+abstract")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("rollback form: %d\n%s", resp.StatusCode, body)
	}
	f.wait()
	st := f.status()
	if len(st.Rollbacks) == 0 && !slices.ContainsFunc(st.Pending, func(q refine.Question) bool { return q.Kind == refine.KindRollback }) {
		t.Errorf("neither a rollback nor its question: %+v", st.Pending)
	}
}

func TestResumeAPI(t *testing.T) {
	f := newFixture(t, "")
	q := f.status().Pending[0]
	resp, body := f.do(http.MethodPost, "/api/sessions/"+f.id+"/resume", "", "")
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("resume: %d %s", resp.StatusCode, body)
	}
	f.wait()
	// Nothing answered: the session asks the same question again.
	if st := f.status(); len(st.Pending) == 0 || st.Pending[0].ID != q.ID {
		t.Errorf("after resume, pending %+v; want %s again", st.Pending, q.ID)
	}
	live, _ := f.server.peek(f.id)
	if live.Running || !strings.Contains(live.Activity, q.ID) {
		t.Errorf("runner after the run: %+v", live)
	}
	resp, _ = f.do(http.MethodPost, "/api/sessions/nosuch/resume", "", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("resume of an unknown session: %d", resp.StatusCode)
	}
}
