package text

import (
	"strconv"
	"strings"
)

// Plural is n of noun in words: "1 run", "3 runs", "0 cells"; a noun
// ending in s, x, z, ch or sh takes "es": "2 searches". The count is
// the noun's last word's: "2 change points".
func Plural(n int, noun string) string {
	s := strconv.Itoa(n) + " " + noun
	if n == 1 {
		return s
	}
	for _, end := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			return s + "es"
		}
	}
	return s + "s"
}
