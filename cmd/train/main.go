// Command train trains a Vision Transformer from a YAML config.
//
//	go run ./cmd/train -config configs/mnist_vit_tiny.yaml [-set key=value]… [-out DIR] [-resume | -overwrite] [-dry-run] [-log-format text|json]
//
// Built with -tags mpi and started by mpirun (or srun, or an MPIJob), each
// process is one rank of a data-parallel job; see the README's "Training on
// several processes or machines".
//
// -dry-run validates the config, builds the graph and prints the parameter
// table. SIGINT/SIGTERM finish the current step (or stop an evaluation within
// a batch), write a checkpoint, print the command that resumes the run and
// exit with status 130 (SIGINT) or 143 (SIGTERM); a second signal exits at
// once. -resume continues from the checkpoint; it refuses a config
// that changes the run's math, and exits 0 for a run that is complete. One
// trainer at a time may use an output directory, and a fresh run refuses a
// directory holding an earlier run unless -overwrite is given.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/internal/cliflag"
	"github.com/vitgo/vit/internal/signals"
	"github.com/vitgo/vit/report"
	"github.com/vitgo/vit/train"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: read the flags and the config, then either print the
// -dry-run summary or train. It returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	c, status := parseFlags(args, stderr)
	if c == nil {
		return status
	}
	cfg, status := c.loadConfig(stderr)
	if status != 0 {
		return status
	}
	if c.cpuProfile != "" {
		stopProfile, err := startCPUProfile(c.cpuProfile, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "train: %v\n", err)
			return 2
		}
		defer stopProfile()
	}
	// Say which kernel bf16's products run on, and warn when it is the
	// slow emulation.
	var bf16Line string
	var bf16Warn bool
	if cfg.WithDefaults().Train.Precision == graph.BF16 {
		bf16Line, bf16Warn = kernels.BF16KernelNote()
	}
	if c.dry {
		return dryRun(cfg, bf16Line, bf16Warn, stdout, stderr)
	}
	switch {
	case bf16Warn:
		c.log.Warn(bf16Line)
	case bf16Line != "":
		c.log.Info(bf16Line)
	}
	if c.memProfile != "" {
		defer func() {
			if err := atomicfile.Write(c.memProfile, pprof.WriteHeapProfile); err != nil {
				fmt.Fprintf(stderr, "train: -memprofile: %v\n", err)
			}
		}()
	}
	return c.runTraining(cfg, stderr)
}

// command is the parsed command line.
type command struct {
	cfgPath    string          // -config
	sets       cliflag.Strings // -set, then -out as train.out_dir
	userSets   []string        // -set as given, for the resume command
	resume     bool            // -resume
	overwrite  bool            // -overwrite
	dry        bool            // -dry-run
	cpuProfile string          // -cpuprofile
	memProfile string          // -memprofile
	log        *logrus.Logger  // -log-format, -v
}

// parseFlags reads the flags and checks them against each other; on a bad
// command line it reports it and returns nil and the exit status.
func parseFlags(args []string, stderr io.Writer) (*command, int) {
	flag := flag.NewFlagSet("train", flag.ContinueOnError)
	flag.SetOutput(stderr)
	c := &command{}
	flag.StringVar(&c.cfgPath, "config", "", "YAML config file (required)")
	flag.Var(&c.sets, "set", "override a config key: -set optim.lr=5e-4 (repeatable)")
	out := flag.String("out", "", "output directory (overrides train.out_dir)")
	flag.BoolVar(&c.resume, "resume", false, "continue from the output directory's last checkpoint")
	flag.BoolVar(&c.overwrite, "overwrite", false, "delete an earlier run's files (checkpoints, metrics, plots) from the output directory and start afresh")
	flag.BoolVar(&c.dry, "dry-run", false, "validate the config, build the graph, print the parameters, and exit")
	logFormat := flag.String("log-format", "text", "log format: text or json")
	verbose := flag.Bool("v", false, "debug logging (a line every train.log_every steps)")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) here")
	flag.StringVar(&c.memProfile, "memprofile", "", "write a heap profile (pprof) here at the end")
	if err := flag.Parse(args); err != nil {
		return nil, 2
	}
	if err := cliflag.DistinctOutputs(
		cliflag.Path{Flag: "-config", Path: c.cfgPath},
		cliflag.Path{Flag: "-cpuprofile", Path: c.cpuProfile, Output: true},
		cliflag.Path{Flag: "-memprofile", Path: c.memProfile, Output: true},
	); err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return nil, 2
	}
	var err error
	if c.log, err = newLogger(stderr, *logFormat, *verbose); err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return nil, 2
	}
	if err := kernels.CheckBF16KernelEnv(); err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return nil, 2
	}
	if c.cfgPath == "" {
		fmt.Fprintln(stderr, "train: -config is required")
		flag.Usage()
		return nil, 2
	}
	c.userSets = append([]string(nil), c.sets...)
	if *out != "" {
		c.sets = append(c.sets, "train.out_dir="+*out)
	}
	if c.resume && c.overwrite {
		fmt.Fprintln(stderr, "train: -resume and -overwrite exclude each other: continue the run, or start it afresh")
		return nil, 2
	}
	return c, 0
}

// loadConfig reads -config with the -set overrides and checks the profiles'
// paths against the run's files; on an error it reports it (with advice for
// a -set) and returns the exit status.
func (c *command) loadConfig(stderr io.Writer) (train.Config, int) {
	cfg, err := train.LoadConfig(c.cfgPath, c.sets)
	if err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		printAdvice(stderr, err)
		return cfg, 2
	}
	if err := profilesApart(cfg, c.cpuProfile, c.memProfile); err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return cfg, 2
	}
	return cfg, 0
}

// dryRun prints the -dry-run summary of cfg and the bf16 kernel's line.
func dryRun(cfg train.Config, bf16Line string, bf16Warn bool, stdout, stderr io.Writer) int {
	if err := train.Summary(stdout, cfg); err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return 1
	}
	if bf16Warn {
		fmt.Fprintf(stdout, "warning: %s\n", bf16Line)
	} else if bf16Line != "" {
		fmt.Fprintln(stdout, bf16Line)
	}
	return 0
}

// runTraining runs cfg as one rank of the job (a job of one without MPI) until it
// finishes, fails or a signal stops it, and returns finish's exit status.
func (c *command) runTraining(cfg train.Config, stderr io.Writer) int {
	if os.Getenv("GOGC") == "" {
		// A steady-state step allocates almost nothing (ops own their
		// buffers), so a tight GC target costs no time and keeps the peak
		// RSS near the live heap.
		debug.SetGCPercent(20)
	}
	// Under mpirun (a binary built with -tags mpi) this process is one rank
	// of a data-parallel job; otherwise a job of one.
	comm, err := dist.Init()
	if err != nil {
		fmt.Fprintf(stderr, "train: %v\n", err)
		return 2
	}
	ctx, stop := signals.Context(context.Background(), stderr, "stopping after the current step (or evaluation batch)")
	defer stop()
	res, err := train.Run(ctx, cfg, train.Options{Resume: c.resume, Overwrite: c.overwrite, Log: c.log, Progress: report.NewProgress(os.Stdout), Comm: comm})
	resumeCmd := resumeCommand(progName(), c.cfgPath, c.userSets, cfg.Train.OutDir)
	return finish(res, err, comm, c.log, stderr, resumeCmd, signals.ExitStatus(ctx))
}

// finish reports how the run ended and returns the exit status: 0 for a
// finished (or already complete) run, the signal's status for an
// interrupted one (130 for SIGINT, 143 for SIGTERM; with the command that
// resumes it), 1 for a failure.
func finish(res *train.Result, err error, comm dist.Comm, log *logrus.Logger, stderr io.Writer, resumeCmd string, sigStatus int) int {
	if everyRank(err) {
		// Every rank found the same difference: each reports it and ends
		// alone, with no MPI_Abort. (A rank whose own start failed aborts
		// the job after its message; the others wait for that here.)
		log.Errorf("rank %d of %d: %v", comm.Rank(), comm.Size(), err)
		if ferr := dist.Finalize(); ferr != nil {
			log.Errorf("%v", ferr)
		}
		return 1
	}
	if errors.Is(err, train.ErrRunComplete) {
		log.Infof("%v", err)
		if err := dist.Finalize(); err != nil {
			log.Errorf("%v", err)
			return 1
		}
		return 0
	}
	if errors.Is(err, train.ErrInterrupted) {
		log.Errorf("%v", err)
		// No MPI_Finalize here: it synchronises with the launcher, which
		// may be tearing the job down after a signal.
		if comm.Rank() == 0 {
			fmt.Fprintf(stderr, "resume with: %s\n", resumeCmd)
		}
		return sigStatus
	}
	if err != nil {
		if comm.Size() > 1 {
			// The other ranks wait in a collective for this one: end them all.
			log.Errorf("rank %d of %d: %v", comm.Rank(), comm.Size(), err)
			if comm.Rank() == 0 {
				printAdvice(stderr, err)
			}
			comm.Abort(1)
		}
		log.Errorf("%v", err)
		if comm.Rank() == 0 {
			printAdvice(stderr, err)
		}
		return 1
	}
	if err := dist.Finalize(); err != nil {
		log.Errorf("%v", err)
		return 1
	}
	if comm.Rank() != 0 {
		return 0
	}
	log.Infof("done: %d steps, val top-1 %.4f (best %.4f), outputs in %s", res.Steps, res.Last.Top1, res.BestTop1, res.OutDir)
	return 0
}

// profilesApart refuses, before anything is trained, a profile path that
// is a file the run reads (distill.teacher, finetune.init_from) or writes
// (a run file in train.out_dir, or out_dir itself): the run or the
// profile would be lost.
func profilesApart(cfg train.Config, cpu, mem string) error {
	for _, p := range []cliflag.Path{{Flag: "-cpuprofile", Path: cpu, Output: true}, {Flag: "-memprofile", Path: mem, Output: true}} {
		if err := cliflag.DistinctOutputs(p,
			cliflag.Path{Flag: "distill.teacher", Path: cfg.Distill.Teacher},
			cliflag.Path{Flag: "finetune.init_from", Path: cfg.Finetune.InitFrom},
		); err != nil {
			return err
		}
		if err := cliflag.OutputInDir(p.Flag, p.Path, "train.out_dir", cfg.Train.OutDir, train.WritesFile); err != nil {
			return err
		}
	}
	return nil
}

// everyRank reports whether err is one that every rank of a job returns
// alike: ranks started with other configs, data or teachers, another rank's
// failure to start, or a teacher's non-finite logits on some rank's rows.
func everyRank(err error) bool {
	rc, rd, rf, tl := (*train.RankConfigError)(nil), (*train.RankDataError)(nil), (*train.RankFailedError)(nil), (*train.TeacherLogitsError)(nil)
	return errors.As(err, &rc) || errors.As(err, &rd) || errors.As(err, &rf) || errors.As(err, &tl) && tl.Ranks != nil
}

// startCPUProfile starts a CPU profile written atomically to path; the
// returned function stops it and commits the file (reporting a failed
// commit on stderr).
func startCPUProfile(path string, stderr io.Writer) (func(), error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			fmt.Fprintf(stderr, "train: -cpuprofile: %v\n", err)
		}
	}, nil
}

// newLogger returns the run's logger writing to w in the -log-format
// ("text" or "json"), at debug level when verbose.
func newLogger(w io.Writer, format string, verbose bool) (*logrus.Logger, error) {
	log := logrus.New()
	log.SetOutput(w)
	switch format {
	case "text":
	case "json":
		log.SetFormatter(&logrus.JSONFormatter{})
	default:
		return nil, fmt.Errorf("-log-format must be text or json, got %q", format)
	}
	if verbose {
		log.SetLevel(logrus.DebugLevel)
	}
	return log, nil
}

// advice is what the user of this command can do about a refusal, in
// terms of its flags: the library's typed errors name keys and files.
func advice(err error) string {
	var (
		used   *train.OutDirUsedError
		locked *train.OutDirLockedError
		change *train.ResumeConfigError
		noRun  *train.NoRunError
	)
	switch {
	case errors.As(err, &used):
		return "pass -resume to continue it, or -overwrite to delete that run's files and start afresh"
	case errors.As(err, &locked):
		return "wait for it to end, stop it, or choose another -out"
	case errors.Is(err, train.ErrResumeOverwrite):
		return "-resume and -overwrite exclude each other"
	case errors.As(err, &change):
		return "undo these changes, or start a new run with another -out"
	case errors.As(err, &noRun):
		return "start without -resume"
	}
	return cliflag.SetAdvice(err)
}

// printAdvice prints advice(err) as a line of its own, if any.
func printAdvice(w io.Writer, err error) {
	if a := advice(err); a != "" {
		fmt.Fprintf(w, "train: %s\n", a)
	}
}

// progName is how the resume command names this program: `go run
// ./cmd/train` for a binary that go run built in a temporary directory,
// else the path it was started by.
func progName() string {
	p := os.Args[0]
	if strings.Contains(p, "go-build") {
		return "go run ./cmd/train"
	}
	return shellQuote(p)
}

// resumeCommand is the command line that continues the run: the same
// config and -set flags, its output directory, and -resume.
func resumeCommand(prog, cfgPath string, sets []string, outDir string) string {
	words := []string{prog, "-config", shellQuote(cfgPath)}
	for _, s := range sets {
		words = append(words, "-set", shellQuote(s))
	}
	words = append(words, "-out", shellQuote(outDir), "-resume")
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
