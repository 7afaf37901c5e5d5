package changepoint

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// nightly is a series of nights of 3 runs, each the night's level times
// a factor drawn uniformly within ±spread (a share), the level 100 and
// 100*(1+step) from night at on.
func nightly(r *rand.Rand, nights, at int, step, spread float64) [][]float64 {
	out := make([][]float64, nights)
	for n := range out {
		level := 100.0
		if n >= at {
			level *= 1 + step
		}
		for range 3 {
			out[n] = append(out[n], level*(1+spread*(2*r.Float64()-1)))
		}
	}
	return out
}

// TestGateOnce: over 120 nights of 30 series with a -6% step at night 40
// under 5% run noise, the 5% gate, run each night on the nights so far,
// fires exactly once a series, and by 10 nights after the step in every
// series whose step's interval passes the gate by then.
func TestGateOnce(t *testing.T) {
	const nights, step, gate = 120, 40, 5.0
	r := rand.New(rand.NewPCG(34, 1))
	g := Gate{Percent: gate}
	series := make([][][]float64, 30)
	for s := range series {
		series[s] = nightly(r, nights, step, -0.06, 0.05)
	}
	for s, runs := range series {
		t.Run(strconv.Itoa(s), func(t *testing.T) {
			t.Parallel()
			var fired []int
			memo := Memo{}
			passed := -1 // the first night the step's interval passes the gate
			for n := 2 * MinSide; n <= nights; n++ {
				now, _ := Analyse(runs[:n], Options{})
				memo[n] = now
				for _, p := range now {
					if passed < 0 && p.At >= step-FollowSessions && p.At <= step+FollowSessions && p.Hi <= -gate {
						passed = n - 1
					}
				}
				if len(g.Fires(runs[:n], now, Options{}, memo)) > 0 {
					fired = append(fired, n-1)
				}
			}
			t.Logf("fired on nights %v, interval past the gate from night %d", fired, passed)
			if len(fired) != 1 {
				t.Fatalf("the gate fired on nights %v; want once", fired)
			}
			if passed >= 0 && passed <= step+10 && fired[0] > step+10 {
				t.Errorf("the gate fired on night %d, its interval past it on night %d; want by night %d", fired[0], passed, step+10)
			}
		})
	}
}
