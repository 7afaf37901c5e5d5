package scenarios

// MixAnswer is one of the origin's answers of the mix scenarios and how
// often an exchange asks for it.
type MixAnswer struct {
	Path   string // the origin's file: "/mix/32k"
	Size   int    // its length in bytes; its content is OriginAnswer(Size)
	Weight int    // exchanges asking for it, out of MixWeights
}

// mixAnswers is the mix's size distribution, the one place it is
// defined: many small answers and a few large ones, 44,954 bytes on
// average. The seeds' mix figures imply about 45 KB an exchange (1.72
// Gbit/s at 4.7k exchanges a second, 1.08 Gbit/s at 3.0k). The origin
// serves these files and bench mix asks for them and checks them.
var mixAnswers = []MixAnswer{
	{"/mix/1k", 1 << 10, 30},
	{"/mix/8k", 8 << 10, 25},
	{"/mix/32k", 32 << 10, 20},
	{"/mix/64k", 64 << 10, 15},
	{"/mix/256k", 256 << 10, 10},
}

// MixWeights is the sum of the mix answers' weights.
const MixWeights = 100

// MixHalfCloseEvery: one exchange in this many sends its request with
// "Connection: close", then shuts down the client's sending side
// (shutdown(SHUT_WR)) and must still receive the whole answer; the
// connection is then opened again through the proxy.
const MixHalfCloseEvery = 10

// MixAnswers returns the mix's answers in order of size. The slice is
// the caller's.
func MixAnswers() []MixAnswer { return append([]MixAnswer(nil), mixAnswers...) }

// MixMeanSize is the mean answer of the mix, in bytes.
func MixMeanSize() float64 {
	var sum, w int
	for _, a := range mixAnswers {
		sum += a.Size * a.Weight
		w += a.Weight
	}
	return float64(sum) / float64(w)
}
