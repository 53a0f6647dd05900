//go:build linux

package faults_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// buildErrata builds the errata binary into a temporary directory.
func buildErrata(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "errata")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/errata")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build errata: %v\n%s", err, out)
	}
	return bin
}

// cluster drives deploy/local/cluster for one test: its own directory and
// ports, removed (processes killed, data deleted) when the test ends, and
// also at the start, in case an earlier run was itself killed.
type cluster struct {
	script string
	dir    string
	base   int
	env    []string
	adm    *kadm.Client
	client *kgo.Client
}

func startCluster(t *testing.T, ctx context.Context, root string) *cluster {
	t.Helper()
	local := os.Getenv("ERRATA_LOCAL_DIR")
	if local == "" {
		local = filepath.Join(root, ".local")
	}
	c := &cluster{script: filepath.Join(root, "deploy", "local", "cluster"), dir: filepath.Join(local, "cluster-faults")}
	c.env = []string{"ERRATA_CLUSTER_DIR=" + c.dir, "ERRATA_STOP_TIMEOUT=20", "ERRATA_KAFKA_TIMEOUT=120"}
	// Leftovers of a run that could not clean up (its own ports are in its configs).
	if _, err := os.Stat(c.dir); err == nil {
		_, _ = c.run(ctx, "kill", "1", "2", "3")
		_ = os.RemoveAll(c.dir)
	}
	c.base = freePortBase(t)
	c.env = append(c.env, fmt.Sprintf("ERRATA_CLUSTER_PORT=%d", c.base))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := c.run(ctx, "kill", "1", "2", "3"); err != nil {
			t.Logf("cluster kill: %v\n%s", err, out)
		}
		if t.Failed() || os.Getenv("ERRATA_FAULT_ARTIFACTS") != "" {
			keepLogs(t, filepath.Join(c.dir, "logs"))
		}
		if err := os.RemoveAll(c.dir); err != nil {
			t.Logf("remove %s: %v", c.dir, err)
		}
	})
	if out, err := c.run(ctx, "up"); err != nil {
		t.Fatalf("cluster up: %v\n%s", err, out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers()...), kgo.RetryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	c.client, c.adm = cl, kadm.NewClient(cl)
	return c
}

// keepLogs copies the logs of the brokers and errata processes to
// ERRATA_FAULT_ARTIFACTS (always, when it is set) or, when the test failed,
// to the system's temp directory.
func keepLogs(t *testing.T, dir string) {
	dst := os.Getenv("ERRATA_FAULT_ARTIFACTS")
	if dst == "" {
		dst = filepath.Join(os.TempDir(), "errata-cluster-faults-logs")
	}
	_ = os.RemoveAll(dst)
	if out, err := exec.Command("cp", "-r", dir, dst).CombinedOutput(); err != nil {
		t.Logf("keep logs: %v %s", err, out)
		return
	}
	t.Logf("cluster and errata logs kept in %s", dst)
}

func (c *cluster) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.script, args...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *cluster) brokers() []string {
	out := make([]string, 3)
	for i := range out {
		out[i] = fmt.Sprintf("127.0.0.1:%d", c.base+i+1)
	}
	return out
}

// freePortBase finds a base port whose six cluster ports (base+1..3 for the
// brokers, base+101..103 for their controllers) are free.
func freePortBase(t *testing.T) int {
	t.Helper()
	for base := 39090; base < 60000; base += 200 {
		free := true
		for _, off := range []int{1, 2, 3, 101, 102, 103} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+off))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no free port range for the cluster")
	return 0
}

// partitionState is the leader and in-sync replicas of one partition.
type partitionState struct {
	Topic     string
	Partition int32
	Leader    int32
	ISR       []int32
}

// partitions lists the partitions of topics.
func (c *cluster) partitions(ctx context.Context, topics ...string) ([]partitionState, error) {
	md, err := c.adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var out []partitionState
	for _, name := range topics {
		td, ok := md.Topics[name]
		if !ok || td.Err != nil {
			return nil, fmt.Errorf("topic %s: %v", name, td.Err)
		}
		for _, p := range td.Partitions.Sorted() {
			out = append(out, partitionState{Topic: name, Partition: p.Partition, Leader: p.Leader, ISR: slices.Sorted(slices.Values(p.ISR))})
		}
	}
	return out, nil
}

// waitPartitions polls until every partition of topics satisfies ok.
func (c *cluster) waitPartitions(ctx context.Context, timeout time.Duration, topics []string, ok func(partitionState) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		ps, err := c.partitions(ctx, topics...)
		if err == nil {
			bad := 0
			for _, p := range ps {
				if !ok(p) {
					bad++
					last = fmt.Sprintf("%d partitions not there yet, e.g. %s/%d leader %d isr %v", bad, p.Topic, p.Partition, p.Leader, p.ISR)
				}
			}
			if bad == 0 {
				return nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("within %s: %s", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// proc is one errata process the test starts, kills and restarts. It dies
// with the test process (Pdeathsig), and exits that the test did not cause
// are recorded.
type proc struct {
	name    string
	bin     string
	args    []string
	env     []string
	logPath string
	health  string

	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
	expected   bool
	unexpected []string
	started    time.Time
}

func (p *proc) start() error {
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited, p.expected, p.started = cmd, exited, false, time.Now()
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		if !p.expected {
			p.unexpected = append(p.unexpected, fmt.Sprintf("%s (pid %d) exited on its own after %s: %v",
				p.name, cmd.Process.Pid, time.Since(p.started).Round(time.Millisecond), err))
		}
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// signal sends sig and waits up to wait for the exit (then SIGKILL).
func (p *proc) signal(sig syscall.Signal, wait time.Duration) (pid int, clean bool) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.expected = true
	p.mu.Unlock()
	if cmd == nil {
		return 0, true
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-exited
		return cmd.Process.Pid, false
	}
	return cmd.Process.Pid, sig != syscall.SIGTERM || cmd.ProcessState.Success()
}

func (p *proc) kill9() int {
	pid, _ := p.signal(syscall.SIGKILL, 10*time.Second)
	return pid
}

func (p *proc) unexpectedExits() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.unexpected)
}

func (p *proc) alive() bool {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// waitHealthy polls the process's /health until it answers 200.
func (p *proc) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		if !p.alive() {
			return fmt.Errorf("%s exited during start-up; log tail:\n%s", p.name, tail(p.logPath, 30))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.health+"/health", nil)
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy within %s; log tail:\n%s", p.name, timeout, tail(p.logPath, 30))
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runErrata runs a short errata subcommand and returns its stdout.
func runErrata(ctx context.Context, bin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("errata %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out), nil
}

// isDialError reports a request that never reached a server.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
