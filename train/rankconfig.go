package train

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/vitgo/vit/dist"
)

// RankConfigError is returned on every rank of a data-parallel job whose
// ranks were started with different resolved configs (or flags): they would
// otherwise train different runs under one all-reduce, silently, or fail
// later inside MPI with a message that names nothing.
type RankConfigError struct {
	Rank          int    // the lowest rank whose config differs from rank 0's
	Key           string // the first key (in sorted order) that differs
	Rank0, Ranked string // the two values; "" when absent
}

func (e *RankConfigError) Error() string {
	return fmt.Sprintf("rank %d was started with a config that differs from rank 0's at %s: %s on rank 0, %s on rank %d; start every rank with the same config and flags",
		e.Rank, e.Key, show(e.Rank0), show(e.Ranked), e.Rank)
}

// perRankKeys may differ between ranks: they set how one process uses its
// machine (and where that machine keeps the data), not what the job
// computes.
var perRankKeys = map[string]bool{"train.threads": true, "data.workers": true, "data.prefetch": true, "data.root": true,
	"data.train_csv": true, "data.val_csv": true}

// agreeConfig checks that every rank runs rank 0's config: rank 0
// broadcasts the digest of its resolved config (and of the flags that change
// what a rank does), each rank compares its own, and a rank that differs
// shares the first differing key. Every rank returns the same
// *RankConfigError, so they all stop at once, without MPI_Abort.
func agreeConfig(c dist.Comm, cfg Config, resume bool) error {
	if c.Size() == 1 {
		return nil
	}
	mine, err := rankConfigLines(cfg, resume)
	if err != nil {
		return err
	}
	sum := linesDigest(mine)
	rank0 := sum
	if err := c.BcastBytes(rank0[:], 0); err != nil {
		return fmt.Errorf("compare the ranks' configs: %w", err)
	}
	// The lowest rank that differs: an all-reduce of one slot per rank.
	differs := make([]int64, c.Size())
	if rank0 != sum {
		differs[c.Rank()] = 1
	}
	if err := c.AllreduceInt64(differs); err != nil {
		return fmt.Errorf("compare the ranks' configs: %w", err)
	}
	first := -1
	for r, d := range differs {
		if d != 0 {
			first = r
			break
		}
	}
	if first < 0 {
		return nil
	}
	// Rank 0 sends its lines to that rank, which finds the first differing
	// key and sends the answer to every rank.
	lines0, err := bcastString(c, strings.Join(mine, "\n"), 0)
	if err != nil {
		return err
	}
	var found string
	if c.Rank() == first {
		e := firstDifference(strings.Split(lines0, "\n"), mine)
		found = e.Key + "\n" + e.Rank0 + "\n" + e.Ranked
	}
	if found, err = bcastString(c, found, first); err != nil {
		return err
	}
	parts := strings.SplitN(found, "\n", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return &RankConfigError{Rank: first, Key: parts[0], Rank0: parts[1], Ranked: parts[2]}
}

// rankConfigLines are cfg's leaves as sorted "key=value" lines, without
// perRankKeys, and the flag -resume.
func rankConfigLines(cfg Config, resume bool) ([]string, error) {
	flat, err := flatConfig(cfg)
	if err != nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("-resume=%t", resume)}
	for k, v := range flat {
		if !perRankKeys[k] {
			lines = append(lines, k+"="+strconv.Quote(v))
		}
	}
	sort.Strings(lines)
	return lines, nil
}

func linesDigest(lines []string) [sha256.Size]byte {
	return sha256.Sum256([]byte(strings.Join(lines, "\n")))
}

// firstDifference finds the first key, in sorted order, whose line differs
// between rank 0's lines a and another rank's b.
func firstDifference(a, b []string) RankConfigError {
	split := func(lines []string) map[string]string {
		m := map[string]string{}
		for _, l := range lines {
			k, q, _ := strings.Cut(l, "=")
			v, err := strconv.Unquote(q)
			if err != nil {
				v = q
			}
			m[k] = v
		}
		return m
	}
	ma, mb := split(a), split(b)
	var keys []string
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ma[k] != mb[k] {
			return RankConfigError{Key: k, Rank0: ma[k], Ranked: mb[k]}
		}
	}
	return RankConfigError{Key: "(unknown)"}
}

// bcastString broadcasts root's s to every rank.
func bcastString(c dist.Comm, s string, root int) (string, error) {
	n := []int64{int64(len(s))}
	if err := c.BcastInt64(n, root); err != nil {
		return "", fmt.Errorf("compare the ranks' configs: %w", err)
	}
	b := make([]byte, n[0])
	copy(b, s)
	if err := c.BcastBytes(b, root); err != nil {
		return "", fmt.Errorf("compare the ranks' configs: %w", err)
	}
	return string(b), nil
}
