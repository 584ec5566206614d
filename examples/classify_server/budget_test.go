package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/synthimg"
	"github.com/vitgo/vit/internal/testmodel"
)

// TestBudgetQueuePastTimeout: a request whose decode budget is taken waits
// for it (first come first served) rather than being refused at once, and
// one still waiting at its -timeout is answered 503 with Retry-After and a
// message naming -timeout and -decode-budget. The budget is held by the
// test throughout, so the deadline is what ends the wait.
func TestBudgetQueuePastTimeout(t *testing.T) {
	budget := data.NewBudget(1 << 20)
	held, _ := budget.Acquire(context.Background(), 1<<20)
	defer budget.Release(held)
	s := &server{maxBytes: 1 << 20, maxPixels: 1 << 20, timeout: 100 * time.Millisecond,
		dec: classify.Decoder{MaxPixels: 1 << 20, Budget: budget}, decoders: data.NewBudget(1), bodies: data.NewBudget(1 << 30)}
	body := encode(testmodel.Colour(1, 16, 16, 1), "png")
	w := httptest.NewRecorder()
	s.classify(w, httptest.NewRequest(http.MethodPost, "/classify", bytes.NewReader(body)))
	var a answer
	json.NewDecoder(w.Body).Decode(&a)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" ||
		!strings.Contains(a.Error, "-timeout 100ms") || !strings.Contains(a.Error, "-decode-budget") {
		t.Fatalf("%d %q %+v, want 503 with Retry-After naming -timeout 100ms and -decode-budget", w.Code, w.Header().Get("Retry-After"), a)
	}
	if budget.Waiting() != 0 {
		t.Fatalf("%d waiters left in the budget's queue", budget.Waiting())
	}
}

// TestBudgetBodiesQueuePastTimeout: request bodies are read only once
// their bytes are free in the bodies budget (as large as the decode
// budget), so requests queued for the decode budget cannot hold unbounded
// memory; one still waiting at its -timeout is answered 503 naming
// -timeout and -decode-budget. The test holds the bodies budget.
func TestBudgetBodiesQueuePastTimeout(t *testing.T) {
	bodies := data.NewBudget(1 << 20)
	held, _ := bodies.Acquire(context.Background(), 1<<20)
	defer bodies.Release(held)
	s := &server{maxBytes: 1 << 20, maxPixels: 1 << 20, timeout: 100 * time.Millisecond,
		dec: classify.Decoder{MaxPixels: 1 << 20, Budget: data.NewBudget(1 << 30)}, decoders: data.NewBudget(1), bodies: bodies}
	body := encode(testmodel.Colour(1, 16, 16, 1), "png")
	w := httptest.NewRecorder()
	s.classify(w, httptest.NewRequest(http.MethodPost, "/classify", bytes.NewReader(body)))
	var a answer
	json.NewDecoder(w.Body).Decode(&a)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(a.Error, "-timeout 100ms") ||
		!strings.Contains(a.Error, "-decode-budget") || !strings.Contains(a.Error, "body") {
		t.Fatalf("%d %+v, want 503 naming the body, -timeout 100ms and -decode-budget", w.Code, a)
	}
	if bodies.InUse() != 1<<20 || bodies.Waiting() != 0 {
		t.Fatalf("bodies budget: %d in use, %d waiting; want only the test's", bodies.InUse(), bodies.Waiting())
	}
}

// ulimitV is the address-space limit (KiB) for a child: want, or the
// test's own limit where that is lower (CI's guard runs this test under
// one), since a child cannot raise it.
func ulimitV(want int64) int64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err == nil && lim.Cur != ^uint64(0) && int64(lim.Cur>>10) < want {
		return int64(lim.Cur >> 10)
	}
	return want
}

// TestBudgetUnderRlimitAS runs the service as a process under `ulimit -v`
// (3 GB) and sends it 12 concurrent 7000×7000 PNGs, each within every pixel
// and byte limit but decoding to 196 MB: together far more than the
// address space, and less than half of most machines' free memory (the
// former default budget, which admitted them all and died of a Go runtime
// out-of-memory). The default budget now reads RLIMIT_AS less the address
// space in use, so the requests wait their turn and every one is
// answered 200 (under a lower limit, 200 or 503 naming -decode-budget); the process is alive afterwards and exits 143 on SIGTERM.
func TestBudgetUnderRlimitAS(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 12 images of 49 megapixels")
	}
	const n = 12
	body, err := synthimg.FlatPNG(7000, 7000)
	if err != nil {
		t.Fatal(err)
	}
	kib := ulimitV(3_000_000)
	cmd := exec.Command("sh", "-c", `ulimit -v "$1" && exec "$0" -test.run='^$'`, os.Args[0], fmt.Sprint(kib))
	cmd.Env = append(os.Environ(), "CLASSIFY_SERVER_ARGS=-checkpoint "+ckpt+" -addr 127.0.0.1:0 -timeout 10m -pool 1 -batch 4")
	logs := newLogWatch()
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var exitErr error
	exited := make(chan struct{})
	go func() {
		exitErr = cmd.Wait()
		close(exited)
	}()
	url := "http://" + logs.waitFor(t, addrRE, exited)[1] + "/classify"
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Post(url, "image/png", bytes.NewReader(body))
			if err != nil {
				errs[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			var a answer
			json.NewDecoder(resp.Body).Decode(&a)
			codes[i], errs[i] = resp.StatusCode, a.Error
		}()
	}
	wg.Wait()
	for i := range n {
		// Under a lower limit (CI's guard runs this test under 1.5 GB) the
		// service may have no room for one such image: then it refuses
		// each, naming -decode-budget, rather than crash.
		refused := kib < 3_000_000 && codes[i] == http.StatusServiceUnavailable && strings.Contains(errs[i], "-decode-budget")
		if codes[i] != http.StatusOK && !refused {
			t.Errorf("request %d: %d %s", i, codes[i], errs[i])
		}
	}
	if t.Failed() {
		<-exited
		t.Fatalf("under ulimit -v %d (%v):\n%s", kib, exitErr, logs.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-exited
	if ee := (*exec.ExitError)(nil); !errors.As(exitErr, &ee) || ee.ExitCode() != 143 {
		t.Errorf("exit: %v, want status 143 (SIGTERM)\n%s", exitErr, logs.String())
	}
	if regexp.MustCompile("out of memory").MatchString(logs.String()) {
		t.Errorf("the runtime ran out of memory:\n%s", logs.String())
	}
	t.Logf("ulimit -v %d: %s", kib, regexp.MustCompile(`decode budget.*`).FindString(logs.String()))
}
