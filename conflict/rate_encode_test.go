package conflict

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestRateEncoderMatchesMarshal plays histories through every kind of
// change (records added, a round re-run, records dropped, the alert
// moved, nil and empty lists) and checks each encoding against
// json.Marshal.
func TestRateEncoderMatchesMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var e RateEncoder
	var h RateHistory
	check := func(step string) {
		t.Helper()
		got, err := e.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: Encode\n got %s\nwant %s", step, got, want)
		}
	}
	check("zero")
	h.Records = []rateRecord{}
	check("empty")
	for i := range 400 {
		switch op := rng.IntN(10); {
		case op < 5: // the next round
			h.Records = append(h.Records, rateRecord{Round: len(h.Records) + 1, Disagreed: rng.IntN(3), Total: rng.IntN(5), Submitted: rng.IntN(4)})
		case op < 7 && len(h.Records) > 0: // the last round re-run
			h.Records[len(h.Records)-1].Disagreed = rng.IntN(3)
		case op < 8 && len(h.Records) > 0: // rolled back
			h.Records = h.Records[:rng.IntN(len(h.Records))]
		case op < 9:
			h.Alerted = rng.IntN(4)
		default:
			if rng.IntN(4) == 0 {
				h.Records = nil
			}
		}
		// A fresh slice now and then, as CheckRate returns.
		if rng.IntN(3) == 0 && h.Records != nil {
			h.Records = append([]rateRecord{}, h.Records...)
		}
		check("step " + string(rune('0'+i%10)))
	}
}
