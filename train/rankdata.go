package train

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
)

// RankDataError is returned on every rank of a data-parallel job whose ranks
// would train on different data (data.root is a per-rank key, its files are
// compared instead) or distil from different teachers: a rank on another
// data set, or on a folder whose classes are renamed or reordered, would
// train under labels that mean another class on each rank.
type RankDataError struct {
	Key   string // the config key whose files differ: data.root or distill.teacher
	Split string // the data split (train or val); "" for the teacher
	Ranks []int  // the ranks whose digest differs from rank 0's, ascending
	// Rank0 and Ranked describe what rank 0 and the first of Ranks hold.
	Rank0, Ranked string
}

func (e *RankDataError) Error() string {
	what := e.Key
	if e.Split != "" {
		what = fmt.Sprintf("%s (%s split)", e.Key, e.Split)
	}
	rs := make([]string, len(e.Ranks))
	for i, r := range e.Ranks {
		rs[i] = fmt.Sprint(r)
	}
	return fmt.Sprintf("rank(s) %s hold other files than rank 0 at %s: rank 0 has %s, rank %d has %s; give every rank the same files",
		strings.Join(rs, ", "), what, e.Rank0, e.Ranks[0], e.Ranked)
}

// RankFailedError is returned on the ranks whose own part of a stage went
// well when other ranks' failed (each of those returns its own error): every
// rank stops, and none waits in a collective for a rank that has stopped.
type RankFailedError struct {
	Stage string // what the ranks were doing, e.g. "open the data"
	Ranks []int  // the ranks that failed, ascending
}

func (e *RankFailedError) Error() string {
	return fmt.Sprintf("rank(s) %v failed to %s (their own logs say why)", e.Ranks, e.Stage)
}

// allOK shares each rank's outcome of a stage (err, this rank's): nil on
// every rank when every rank's is nil; else this rank's own error, or a
// *RankFailedError on the ranks that succeeded.
func allOK(c dist.Comm, stage string, err error) error {
	if c.Size() == 1 {
		return err
	}
	failed := make([]int64, c.Size())
	if err != nil {
		failed[c.Rank()] = 1
	}
	if rerr := c.AllreduceInt64(failed); rerr != nil {
		return fmt.Errorf("%s: share the ranks' outcome: %w", stage, rerr)
	}
	if err != nil {
		return err
	}
	var ranks []int
	for r, f := range failed {
		if f != 0 {
			ranks = append(ranks, r)
		}
	}
	if ranks != nil {
		return &RankFailedError{Stage: stage, Ranks: ranks}
	}
	return nil
}

// agreeData ends the data-parallel ranks at once when any failed to open
// its data (opened, this rank's error), or when their training or
// validation sets differ from rank 0's (data.Digest: the class list, and
// the files' contents, or a folder's file names, sizes and labels): a
// *RankDataError naming data.root and the split on every rank.
func (r *run) agreeData(opened error) error {
	if err := allOK(r.comm, "open the data", opened); err != nil || r.comm.Size() == 1 {
		return err
	}
	for _, s := range []struct {
		split data.Split
		ds    data.Dataset
	}{{data.Train, r.data.train}, {data.Val, r.data.val}} {
		sum, err := data.Digest(s.ds)
		if err = allOK(r.comm, "digest the data", err); err != nil {
			return err
		}
		key, root := r.cfg.Data.SplitSource(s.split)
		if root == "" {
			root = "(located)"
		}
		desc := fmt.Sprintf("%s in %s: %d images, classes %s, digest %x", s.ds.Name(), root, s.ds.Len(), showClasses(s.ds.Classes()), sum[:6])
		if err := agreeDigest(r.comm, sum, desc, &RankDataError{Key: key, Split: s.split.String()}); err != nil {
			return err
		}
	}
	return nil
}

// agreeTeacher ends the ranks at once when any failed to build its model
// (built, this rank's error: the teacher is loaded on every rank), or when
// their distill.teacher files differ (its SHA-256, of the file each rank
// loaded): a *RankDataError naming distill.teacher on every rank.
func (r *run) agreeTeacher(built error) error {
	if err := allOK(r.comm, "build the model and load the teacher", built); err != nil || r.comm.Size() == 1 || !r.cfg.Distill.Type.On() {
		return err
	}
	sum := sha256.Sum256([]byte(r.teacherSHA))
	if b, err := hex.DecodeString(r.teacherSHA); err == nil && len(b) == len(sum) {
		copy(sum[:], b)
	}
	desc := fmt.Sprintf("%s (sha256 %s)", r.cfg.Distill.Teacher, r.teacherSHA)
	return agreeDigest(r.comm, sum, desc, &RankDataError{Key: "distill.teacher"})
}

// agreeDigest compares each rank's digest sum with rank 0's. When some
// differ it fills e with those ranks and the descriptions (desc) of rank 0
// and of the first of them, and returns it on every rank.
func agreeDigest(c dist.Comm, sum [sha256.Size]byte, desc string, e *RankDataError) error {
	rank0 := sum
	if err := c.BcastBytes(rank0[:], 0); err != nil {
		return fmt.Errorf("compare the ranks' %s: %w", e.Key, err)
	}
	differs := make([]int64, c.Size())
	if rank0 != sum {
		differs[c.Rank()] = 1
	}
	if err := c.AllreduceInt64(differs); err != nil {
		return fmt.Errorf("compare the ranks' %s: %w", e.Key, err)
	}
	for r, d := range differs {
		if d != 0 {
			e.Ranks = append(e.Ranks, r)
		}
	}
	if e.Ranks == nil {
		return nil
	}
	var err error
	if e.Rank0, err = bcastString(c, desc, 0); err != nil {
		return err
	}
	if e.Ranked, err = bcastString(c, desc, e.Ranks[0]); err != nil {
		return err
	}
	return e
}

// showClasses lists up to 5 class names.
func showClasses(cs []string) string {
	if len(cs) <= 5 {
		return fmt.Sprintf("%q", cs)
	}
	return fmt.Sprintf("%q … (%d)", cs[:5], len(cs))
}
