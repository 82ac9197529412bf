package langchain

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/refine-spec/refine/llm"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestNetworkError(t *testing.T) {
	c := classifier{provider: "p"}
	const url = "http://h:1/v1/chat/completions"
	tests := []struct {
		name      string
		err       error
		transient bool
		is        error
		contains  string
	}{
		{name: "dns not found", err: &net.OpError{Op: "dial", Err: &net.DNSError{Name: "h", Err: "no such host", IsNotFound: true}}, contains: `cannot resolve host "h"`},
		{name: "dns temporary", err: &net.OpError{Op: "dial", Err: &net.DNSError{Name: "h", Err: "server misbehaving", IsTemporary: true}}, transient: true, is: ErrUnreachable},
		{name: "tls", err: x509.UnknownAuthorityError{}, contains: "TLS certificate"},
		{name: "timeout", err: &net.OpError{Op: "read", Err: timeoutErr{}}, transient: true, is: ErrTimeout},
		{name: "refused", err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, transient: true, is: ErrUnreachable, contains: "refused"},
		{name: "reset", err: fmt.Errorf("read: %w", syscall.ECONNRESET), transient: true, is: ErrUnreachable},
		{name: "other", err: errors.New("unsupported protocol scheme"), contains: "request to " + url + " failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.networkError(url, tc.err)
			if transient, _ := llm.IsTransient(err); transient != tc.transient {
				t.Errorf("transient = %v, want %v (%v)", transient, tc.transient, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v does not match %v", err, tc.is)
			}
			if !strings.HasPrefix(err.Error(), "p: ") || !strings.Contains(err.Error(), tc.contains) || !strings.Contains(err.Error(), url) {
				t.Errorf("error %q: want the provider, the URL and %q", err, tc.contains)
			}
		})
	}
}
