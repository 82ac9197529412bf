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
