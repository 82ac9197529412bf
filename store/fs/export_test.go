package fs

// WithCheckpointThresholds lets the black-box tests (the crash test's
// child) checkpoint far more often than the defaults would.
var WithCheckpointThresholds = withCheckpointThresholds

// withCheckpointThresholds makes the Store checkpoint once the log holds
// records records or bytes bytes.
func withCheckpointThresholds(records int, bytes int64) Option {
	return func(o *options) { o.maxRecords, o.maxBytes = records, bytes }
}

// withHook installs a test hook before Open's recovery runs, so tests can
// crash recovery itself.
func withHook(h func(point string) error) Option {
	return func(o *options) { o.hook = h }
}

// Flush waits until every commit s returned is in the session's files, so
// black-box tests can look at the files (a test-only door: users see the
// files complete after Close).
func Flush(s *Store) error { return s.flush() }
