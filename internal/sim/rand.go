package sim

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
)

// hashOf mixes the seed and parts into one 64-bit value: the roles' only
// source of choice, so an answer depends on nothing but its request.
func hashOf(seed uint64, parts ...string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatUint(seed, 10)))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return h.Sum64()
}

// rngOf returns a generator seeded by (seed, stream): independent streams
// of one seed never share choices.
func rngOf(seed uint64, stream string) *rand.Rand {
	h := hashOf(seed, stream)
	return rand.New(rand.NewPCG(h, h^0x9e3779b97f4a7c15))
}

// chance reports whether an event of probability p happens for h's draw.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// draws is what a choice is drawn from.
type draws interface {
	Float64() float64
	IntN(n int) int
}
