package statedoc

// view is what the decisions read the session through, as etcd raft's
// RawNode reads its Storage: keys and their values, with no context (the
// driver binds its own, see bind). It writes nothing.
type view interface {
	Get(key string) ([]byte, error)
	List(prefix string) ([]string, error)
}
