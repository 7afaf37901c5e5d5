package text

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "run", "1 run"},
		{0, "run", "0 runs"},
		{3, "run", "3 runs"},
		{-1, "cell", "-1 cells"},
		{2, "change point", "2 change points"},
		{1, "scenario x column pair", "1 scenario x column pair"},
		{4, "scenario x column pair", "4 scenario x column pairs"},
		{12, "CPU profile", "12 CPU profiles"},
		{1, "search", "1 search"},
		{2, "search", "2 searches"},
		{2, "box", "2 boxes"},
		{2, "bus", "2 buses"},
		{2, "flash", "2 flashes"},
		{1000, "exchange", "1000 exchanges"},
	} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q; want %q", c.n, c.noun, got, c.want)
		}
	}
}
