package graph

import G "gorgonia.org/gorgonia"

// Prune returns the part of g that keep reads, directly or through other
// nodes: a subgraph of g (sharing its nodes) without the nodes that no kept
// node needs. A tape machine runs every node of the graph it is given, so a
// node nobody reads still costs its work and its memory; compile and plan
// the pruned graph instead of g. (Gorgonia's RemoveNode would leave g's
// node-by-id index stale, hence a subgraph.)
//
// Gorgonia's symbolic differentiation leaves such nodes behind: an op's
// SymDiff returns the gradient of every operand, and those of operands that
// need none (the input image, a frozen weight, the input of the lowest
// trainable block) are built but never read. Pruning after G.Grad drops
// them: no weight gradient for a frozen Linear, no input gradient below the
// lowest trainable block.
func Prune(g *G.ExprGraph, keep ...*G.Node) *G.ExprGraph {
	return g.SubgraphRoots(keep...)
}
