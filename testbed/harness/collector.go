// SPDX-License-Identifier: Apache-2.0

// Package harness runs the built distribution against the local CloudWatch Logs server and the
// node simulator, and accounts for every line the simulator wrote: the shared machinery of
// `make run` (testbed/cmd/runlocal) and the end-to-end scenarios (testbed/e2e).
package harness

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Collector is a running bin/otelcol-k8s process.
type Collector struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartCollector starts bin with --config config, the environment plus env, its output appended
// to logPath. The process gets its own process group, so a terminal's Ctrl-C reaches only the
// caller, which stops the collector in order.
func StartCollector(bin, config string, env []string, logPath string) (*Collector, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("the distribution binary is missing (build it with `make build-only`): %w", err)
	}
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", config) //nolint:gosec // the binary under test, named by the caller
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = out.Close() // the start error is the one to report
		return nil, err
	}
	c := &Collector{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		_ = out.Close() // the child has exited: its output is written
		close(c.done)
	}()
	return c, nil
}

// Exited reports whether the process has ended, and how.
func (c *Collector) Exited() (bool, error) {
	select {
	case <-c.done:
		return true, c.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM and waits up to timeout for a clean exit, then kills the process.
func (c *Collector) Stop(timeout time.Duration) error {
	if exited, err := c.Exited(); exited {
		return err
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return c.err
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("collector did not stop within %s after SIGTERM: killed", timeout)
	}
}

// Kill ends the process with SIGKILL (kill -9) and waits for it.
func (c *Collector) Kill() {
	if exited, _ := c.Exited(); exited {
		return
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

// ErrExited is returned by waits when the collector ended on its own.
var ErrExited = errors.New("collector exited")

// Pid is the collector's process id.
func (c *Collector) Pid() int { return c.cmd.Process.Pid }

// FreeAddr returns a loopback address with a port that was free a moment ago, for a
// collector's health check.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }() // only probing for a free port
	return ln.Addr().String(), nil
}

// WaitHealthy waits until the health_check extension at addr answers 200 (the pipelines run and
// cri_log's first discovery, where start_at: end applies, is done), the collector exits, or
// timeout passes.
func WaitHealthy(addr string, c *Collector, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		if resp, err := client.Get("http://" + addr + "/"); err == nil { //nolint:noctx // a local probe under the client's timeout
			_ = resp.Body.Close() // only the status matters
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if exited, err := c.Exited(); exited {
			return fmt.Errorf("%w before it was healthy: %v", ErrExited, err) //nolint:errorlint // err is nil after a clean exit
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the collector's health check at %s did not answer 200 within %s", addr, timeout)
		}
		time.Sleep(20 * time.Millisecond) // polling an HTTP endpoint: there is no event to wait on
	}
}
