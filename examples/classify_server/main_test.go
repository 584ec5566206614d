package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/testmodel"
)

var ckpt string

func TestMain(m *testing.M) {
	if args := os.Getenv("CLASSIFY_SERVER_ARGS"); args != "" { // the child of TestSIGTERM
		os.Args = append([]string{"classify_server"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "classify-server-test-*")
	if err != nil {
		log.Fatal(err)
	}
	if ckpt, err = testmodel.Checkpoint(dir); err != nil {
		log.Fatal(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var addrRE = regexp.MustCompile(`listening on (\S+)`)

// addrWriter hands the first "listening on ADDR" it sees to addr.
type addrWriter struct {
	once sync.Once
	addr chan string
}

func (w *addrWriter) Write(p []byte) (int, error) {
	if m := addrRE.FindSubmatch(p); m != nil {
		w.once.Do(func() { w.addr <- string(m[1]) })
	}
	return len(p), nil
}

// start runs the server in-process on a free loopback port; the returned
// stop shuts it down and checks that run returned nil.
func start(t *testing.T, extra ...string) (url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	aw := &addrWriter{addr: make(chan string, 1)}
	done := make(chan error, 1)
	args := append([]string{"-checkpoint", ckpt, "-addr", "127.0.0.1:0", "-topk", "2", "-max-bytes", "200000", "-max-pixels", "250000", "-pool", "2", "-batch", "4"}, extra...)
	go func() { done <- run(ctx, args, log.New(aw, "", 0)) }()
	select {
	case a := <-aw.addr:
		url = "http://" + a + "/classify"
	case err := <-done:
		t.Fatalf("server ended: %v", err)
	case <-time.After(5 * time.Minute): // a bound only
		t.Fatal("server did not start")
	}
	return url, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

var client = &http.Client{Timeout: 5 * time.Minute} // a bound only

type answer struct {
	Predictions []classify.Prediction
	Error       string
}

func post(t *testing.T, url string, body []byte) (int, answer) {
	resp, err := client.Post(url, "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, answer{}
	}
	defer resp.Body.Close()
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Errorf("status %d: body is not JSON: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, a
}

func encode(img image.Image, format string) []byte {
	var b bytes.Buffer
	if format == "jpeg" {
		jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
	} else {
		png.Encode(&b, img)
	}
	return b.Bytes()
}

func TestServerAnswers(t *testing.T) {
	url, stop := start(t)
	defer stop()
	// 8 callers × 3 requests at once, PNG and JPEG, every class.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 3; r++ {
				class, format := (g+r)%3, []string{"png", "jpeg"}[(g+r)%2]
				code, a := post(t, url, encode(testmodel.Colour(class, 20+g, 30+r, uint32(10*g+r)), format))
				if code != http.StatusOK || len(a.Predictions) != 2 || a.Predictions[0].Label != testmodel.Classes[class] {
					t.Errorf("caller %d request %d (%s, %s): %d %+v", g, r, testmodel.Classes[class], format, code, a)
				}
			}
		}()
	}
	wg.Wait()

	png := encode(testmodel.Colour(0, 16, 16, 1), "png")
	huge := encode(image.NewGray(image.Rect(0, 0, 1000, 1000)), "png") // small file, 1 MP
	for _, tc := range []struct {
		name string
		body []byte
		code int
		says string // the flag a 413 names (it named the trainer's data.max_pixels)
	}{
		{"garbage", []byte("hello, not an image"), http.StatusBadRequest, ""},
		{"empty", nil, http.StatusBadRequest, ""},
		{"truncated PNG", png[:len(png)/2], http.StatusBadRequest, ""},
		{"body over -max-bytes", make([]byte, 300000), http.StatusRequestEntityTooLarge, "-max-bytes 200000"},
		{"over -max-pixels", huge, http.StatusRequestEntityTooLarge, "-max-pixels 250000"},
	} {
		code, a := post(t, url, tc.body)
		if code != tc.code || a.Error == "" || !strings.Contains(a.Error, tc.says) || strings.Contains(a.Error, "data.") {
			t.Errorf("%s: %d %+v, want %d with an error naming %q", tc.name, code, a, tc.code, tc.says)
		}
	}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d", resp.StatusCode)
	}
}

// TestServerTimeout: -timeout bounds the reading of the body too: a body
// that stops arriving (its Content-Length a lie, or a slow sender) is cut
// off at the request's deadline with 408 naming -timeout, not held for the
// server's former fixed minute. The test waits for the answer, an event.
func TestServerTimeout(t *testing.T) {
	url, stop := start(t, "-timeout", "200ms")
	defer stop()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/classify")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // a bound only, far above -timeout
	fmt.Fprintf(conn, "POST /classify HTTP/1.1\r\nHost: %s\r\nContent-Type: image/png\r\nContent-Length: 100000\r\n\r\n\x89PNG", addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a stalled body got no answer: %v", err)
	}
	defer resp.Body.Close()
	var a answer
	json.NewDecoder(resp.Body).Decode(&a)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(a.Error, "-timeout 200ms") {
		t.Errorf("%d %+v, want 408 naming -timeout 200ms", resp.StatusCode, a)
	}
}

// logWatch collects a child's stderr and lets the test wait for a line.
type logWatch struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed (and replaced) by each write
}

func newLogWatch() *logWatch { return &logWatch{changed: make(chan struct{})} }

func (w *logWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor returns re's first match's submatches once the logs hold one. It
// fails the test if the process exits first, or after minutes (a bound only
// so that a broken server cannot hang the test).
func (w *logWatch) waitFor(t *testing.T, re *regexp.Regexp, exited <-chan struct{}) []string {
	t.Helper()
	bound := time.After(5 * time.Minute)
	for {
		w.mu.Lock()
		m, changed := re.FindStringSubmatch(w.b.String()), w.changed
		w.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-changed:
		case <-exited:
			t.Fatalf("the server exited before logging %q:\n%s", re, w.String())
		case <-bound:
			t.Fatalf("no %q:\n%s", re, w.String())
		}
	}
}

// TestSIGTERM runs the server as a process, sends SIGTERM while a request's
// body is still arriving, and expects that request answered and exit status
// 143. The request asks for "100 Continue", which the server sends once its
// handler reads the body: the test signals after that answer, and sends the
// body after the server has logged that it is shutting down.
func TestSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CLASSIFY_SERVER_ARGS=-checkpoint "+ckpt+" -addr 127.0.0.1:0 -timeout 10m")
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
	addr := logs.waitFor(t, addrRE, exited)[1]

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Minute)) // a bound only
	body := encode(testmodel.Colour(2, 24, 24, 5), "png")
	fmt.Fprintf(conn, "POST /classify HTTP/1.1\r\nHost: %s\r\nContent-Type: image/png\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", addr, len(body))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, got %v %v", resp, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, regexp.MustCompile("shutting down"), exited)
	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("request in flight at SIGTERM: %v", err)
	}
	var a answer
	err = json.NewDecoder(resp.Body).Decode(&a)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(a.Predictions) == 0 || a.Predictions[0].Label != "red" {
		t.Errorf("request in flight at SIGTERM: %d %+v %v", resp.StatusCode, a, err)
	}
	select {
	case <-exited:
		if ee := (*exec.ExitError)(nil); !errors.As(exitErr, &ee) || ee.ExitCode() != 143 {
			t.Errorf("exit: %v, want status 143 (SIGTERM)\n%s", exitErr, logs.String())
		}
	case <-time.After(5 * time.Minute): // a bound only
		t.Fatal("no exit after SIGTERM")
	}
	if _, err := client.Post("http://"+addr+"/classify", "image/png", bytes.NewReader(body)); err == nil {
		t.Error("server still answering after exit")
	}
}

// TestFlagsRefused: a flag value that would answer every request 413 or
// 503 (or start no lane) is refused at start-up, naming the flag, before
// the checkpoint is read.
func TestFlagsRefused(t *testing.T) {
	for _, tc := range [][]string{
		{"-max-bytes", "-5"}, {"-max-pixels", "0"}, {"-timeout", "-1s"}, {"-timeout", "0s"}, {"-timeout", "1ns"}, {"-timeout", "99ms"},
		{"-topk", "0"}, {"-pool", "-1"}, {"-batch", "0"}, {"-precision", "fp16"}, {"-precision", ""},
	} {
		err := run(context.Background(), append([]string{"-checkpoint", "/nonexistent"}, tc...), log.New(io.Discard, "", 0))
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != tc[0] {
			t.Errorf("%v: %v, want a *FlagError for %s", tc, err, tc[0])
		}
	}
}

// TestBF16KernelEnvRefused: an unknown VIT_BF16_KERNEL stops the service
// at start-up, naming the variable, before the checkpoint is read.
func TestBF16KernelEnvRefused(t *testing.T) {
	t.Setenv(kernels.BF16KernelEnv, "emulate")
	err := run(context.Background(), []string{"-checkpoint", "/nonexistent"}, log.New(io.Discard, "", 0))
	if err == nil || !strings.Contains(err.Error(), kernels.BF16KernelEnv) {
		t.Errorf("%s=emulate: %v, want an error naming it", kernels.BF16KernelEnv, err)
	}
}

// TestBatchesByDefault: without -batch, concurrent requests are batched
// (the default was 1 while the docs said callers are batched).
func TestBatchesByDefault(t *testing.T) {
	var o classify.Options
	fs, _, _ := flags(&server{}, &o)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.MaxBatch < 2 {
		t.Fatalf("-batch defaults to %d: concurrent requests would run one at a time", o.MaxBatch)
	}
}

// TestServerPrecision: -precision bf16 serves the same classes with
// bfloat16 products: the probabilities differ from -precision fp32's.
func TestServerPrecision(t *testing.T) {
	img := encode(testmodel.Colour(1, 20, 24, 5), "png")
	prob := map[string]float64{}
	for _, p := range []string{"fp32", "bf16", "int8"} {
		url, stop := start(t, "-precision", p)
		code, a := post(t, url, img)
		stop()
		if code != http.StatusOK || len(a.Predictions) == 0 || a.Predictions[0].Label != testmodel.Classes[1] {
			t.Fatalf("-precision %s: %d %+v", p, code, a)
		}
		prob[p] = a.Predictions[0].Prob
	}
	for _, p := range []string{"bf16", "int8"} {
		if prob["fp32"] == prob[p] {
			t.Errorf("-precision %s answers fp32's probability %v", p, prob["fp32"])
		}
	}
}
