// Package web is refine's browser console and JSON API: an http.Handler
// over a store.Backend (a folder of session folders, SQLite, PostgreSQL)
// that lists sessions, shows one session's gaps, convergence chart, rounds,
// decisions, conflicts, rollbacks and usage, renders each round's Engineer
// and Reviewer outputs, and takes answers to pending questions.
//
// With a Configure function the console also drives sessions: it runs them
// in the background with an Asker that defers every question, so a session
// that asks pauses; an answer given in the page or through
// POST /api/sessions/{id}/answers is recorded by the engine (which checks
// it) and resumes the session in the background. Answers and rollbacks of
// one session are serialised: of two answers racing for one question,
// exactly one is taken and the other gets 409 Conflict.
//
// Pages work without JavaScript (forms POST, then redirect with 303); a
// small script refreshes a running session's page. Everything an LLM wrote
// is escaped, markdown is rendered without raw HTML, links with a scheme
// other than http, https or mailto are neutralised, and every response
// carries a Content-Security-Policy without 'unsafe-inline'. Cross-origin
// POSTs are refused (http.CrossOriginProtection). With a token configured,
// the API needs "Authorization: Bearer TOKEN" and the pages a login that
// sets an HttpOnly, SameSite=Strict cookie.
package web
