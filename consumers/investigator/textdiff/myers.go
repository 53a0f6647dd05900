package textdiff

// editScript compares a and b with Myers' O(ND) algorithm in its linear-
// space form (divide and conquer on the middle snake) and reports which
// elements of a were deleted and which elements of b were inserted; the
// rest form a longest common subsequence. Time is O((N+M)·D), memory
// O(N+M), so even two unrelated 3,000-sentence texts diff in milliseconds.
func editScript(a, b []int) (deleted, inserted []bool) {
	d := &myers{
		a:        a,
		b:        b,
		deleted:  make([]bool, len(a)),
		inserted: make([]bool, len(b)),
	}
	size := 2*(len(a)+len(b)) + 4
	d.vf = make([]int, size)
	d.vb = make([]int, size)
	d.compare(0, len(a), 0, len(b))
	return d.deleted, d.inserted
}

type myers struct {
	a, b              []int
	deleted, inserted []bool
	// vf and vb are the furthest-reaching x per diagonal of the forward
	// and backward searches, reused by every middleSnake call (the
	// recursion only starts after a call has returned).
	vf, vb []int
}

// compare marks the edits that turn a[aLo:aHi] into b[bLo:bHi].
func (d *myers) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		aLo++
		bLo++
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		aHi--
		bHi--
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.inserted[j] = true
		}
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			d.deleted[i] = true
		}
	default:
		x, y, u, v := d.middleSnake(aLo, aHi, bLo, bHi)
		d.compare(aLo, x, bLo, y)
		d.compare(u, aHi, v, bHi)
	}
}

// middleSnake finds the middle snake of an optimal path through the edit
// graph of a[aLo:aHi] and b[bLo:bHi] by running the forward and backward
// searches until they overlap. It returns the snake's start (x, y) and end
// (u, v) in absolute indexes; the elements along it are equal. Both halves
// left and right of it cost strictly less than the whole, so the recursion
// ends. The caller has stripped common prefixes and suffixes, so neither
// range is empty.
func (d *myers) middleSnake(aLo, aHi, bLo, bHi int) (x, y, u, v int) {
	n, m := aHi-aLo, bHi-bLo
	delta := n - m
	odd := delta&1 != 0
	limit := (n + m + 1) / 2
	// Diagonal k (x-y == k) of the forward search is vf[off+k]; diagonal
	// delta+k of the backward search is vb[off+k].
	off := limit + 1
	vf, vb := d.vf, d.vb
	vf[off+1] = 0
	vb[off-1] = n
	a, b := d.a[aLo:aHi], d.b[bLo:bHi]

	for step := 0; step <= limit; step++ {
		// Forward: furthest x on each diagonal after step edits.
		for k := -step; k <= step; k += 2 {
			var px int
			if k == -step || (k != step && vf[off+k-1] < vf[off+k+1]) {
				px = vf[off+k+1] // down: an insertion
			} else {
				px = vf[off+k-1] + 1 // right: a deletion
			}
			py := px - k
			sx, sy := px, py
			for px < n && py < m && a[px] == b[py] {
				px++
				py++
			}
			vf[off+k] = px
			// The backward search has made step-1 edits; it covers
			// diagonals delta-(step-1) .. delta+(step-1).
			if kb := k - delta; odd && kb >= -(step-1) && kb <= step-1 && px >= vb[off+kb] {
				return aLo + sx, bLo + sy, aLo + px, bLo + py
			}
		}
		// Backward: smallest x on each diagonal after step edits, going
		// from (n, m) towards (0, 0).
		for kb := -step; kb <= step; kb += 2 {
			var px int
			if kb == step || (kb != -step && vb[off+kb-1] < vb[off+kb+1]) {
				px = vb[off+kb-1] // up: an insertion
			} else {
				px = vb[off+kb+1] - 1 // left: a deletion
			}
			py := px - (kb + delta)
			ex, ey := px, py
			for px > 0 && py > 0 && a[px-1] == b[py-1] {
				px--
				py--
			}
			vb[off+kb] = px
			if k := kb + delta; !odd && k >= -step && k <= step && px <= vf[off+k] {
				return aLo + px, bLo + py, aLo + ex, bLo + ey
			}
		}
	}
	// Unreachable: the searches always meet within limit steps.
	panic("textdiff: middle snake not found")
}
