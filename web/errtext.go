package web

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/refine-spec/refine"
)

// What a remote client is told of an error.
//
// A Backend's errors are written for the operator at the server: a
// folder Backend names session folders, lock files and its root. A
// client of the console learns the session it asked for and what to do,
// never a server path: errors it cannot act on (404, 500) are replaced
// by a message naming the session, and every other message has its
// absolute paths cut out. The whole error goes to the console's log.

// serverPath matches an absolute path in an error message: a '/' at the
// start or after a space, quote, parenthesis or '=', then at least one
// more path segment.
var serverPath = regexp.MustCompile(`(^|[\s"'(=\[])/[^\s"'()\[\]:;,]*[^\s"'()\[\]:;,.]`)

// scrubPaths replaces the absolute paths in msg with "…".
func scrubPaths(msg string) string {
	return serverPath.ReplaceAllString(msg, "${1}…")
}

// publicMessage returns what a client is told of err, answered with code,
// for session id ("" outside a session).
func publicMessage(code int, id string, err error) string {
	what := "this console"
	if id != "" {
		what = fmt.Sprintf("session %q", id)
	}
	switch {
	case code == http.StatusNotFound && errors.Is(err, errNoRound):
		return scrubPaths(err.Error())
	case code == http.StatusNotFound && id != "":
		return fmt.Sprintf("no such session %q, or it has no such page", id)
	case code == http.StatusNotFound:
		return "not found"
	case code == http.StatusInternalServerError:
		return fmt.Sprintf("%s failed on the server; its operator finds the error in the console's log", what)
	case errors.Is(err, refine.ErrLocked):
		return fmt.Sprintf("%s is in use by another process (a run in progress); try again when it has finished", what)
	}
	return scrubPaths(err.Error())
}
