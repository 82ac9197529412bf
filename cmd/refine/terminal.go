package main

import (
	"fmt"
	"io"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/termtext"
)

// Text from an LLM, a backend or a file the user was handed may carry
// escape sequences that would retitle or clear the terminal, or draw a fake
// question over the real one. Everything the CLI prints in text form goes
// through these (--json output is escaped by encoding/json already).

// safeText escapes text shown on a terminal, keeping newlines and tabs.
func safeText(s string) string { return termtext.Escape(s) }

// safeLine escapes text shown within one line: a title, a label, a cell.
func safeLine(s string) string { return termtext.Line(s) }

// safeErr is an error's message escaped for the terminal.
func safeErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return termtext.Escape(err.Error())
}

// printPending lists the questions a paused session waits for, with their
// options.
func printPending(w io.Writer, pending []refine.Question) {
	for _, q := range pending {
		fmt.Fprintf(w, "\nWaiting for an answer to %s: %s\n", safeLine(q.ID), safeLine(q.Title))
		for _, o := range q.Options {
			fmt.Fprintf(w, "  %s. %s\n", safeLine(o.Key), safeLine(o.Label))
		}
	}
}
