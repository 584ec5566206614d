package graph

import (
	"testing"

	"github.com/vitgo/vit/graph/kernels"
)

// TestAttnBlockRows: AttentionEval's query blocks end on whole tiles of the
// micro-kernel, but for the last one, so a cut costs no more tiles than the
// rows uncut: ViT-Ti's 197 rows in 6 blocks on the 6-row AVX2 tile are 36
// rows a block (33 tiles), not 33 (36 tiles).
func TestAttnBlockRows(t *testing.T) {
	for _, c := range []struct{ queries, blocks, tile, want int }{
		{197, 6, 6, 36}, // ViT-Ti at one image, two cores, AVX2
		{197, 3, 6, 66}, // ViT-S: already whole tiles
		{197, 6, 14, 42},
		{197, 6, 1, 33}, // no tile known (OpenBLAS): an even cut
		{197, 1, 6, 197},
		{10, 2, 6, 6},
		{4, 2, 6, 4}, // never more than the rows
	} {
		rows := attnBlockRows(c.queries, c.blocks, c.tile)
		if rows != c.want {
			t.Errorf("attnBlockRows(%d, %d, %d) = %d, want %d", c.queries, c.blocks, c.tile, rows, c.want)
			continue
		}
		tiles := 0
		for r0 := 0; r0 < c.queries; r0 += rows {
			tiles += (min(rows, c.queries-r0) + c.tile - 1) / c.tile
		}
		if whole := (c.queries + c.tile - 1) / c.tile; tiles != whole {
			t.Errorf("%d rows in blocks of %d: %d tiles of %d rows, uncut %d", c.queries, rows, tiles, c.tile, whole)
		}
	}
}

// TestPackedRowTile: a packed B names the tile height of the kernel that
// reads it, at least 1.
func TestPackedRowTile(t *testing.T) {
	p := kernels.PackB(false, 3, 5, make([]float32, 15), 5)
	if p.RowTile() < 1 {
		t.Fatalf("RowTile() = %d", p.RowTile())
	}
}
