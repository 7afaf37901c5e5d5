package proxies

import (
	"testing"

	"bench/results"
)

// TestDeclarations: each kind is declared once, in its Place, with
// columns of its own kind, a default binary among the names it is found
// by and packages for every family where it has any; no two kinds share
// a place and no two columns a colour.
func TestDeclarations(t *testing.T) {
	places, slots, kinds := map[int]string{}, map[int]string{}, map[string]bool{}
	for _, d := range declared {
		k := d.Adapter.Kind()
		if kinds[k] {
			t.Errorf("kind %s declared twice", k)
		}
		kinds[k] = true
		if other, ok := places[d.Place]; ok {
			t.Errorf("kinds %s and %s share place %d", other, k, d.Place)
		}
		places[d.Place] = k
		for name, s := range d.Colours {
			if other, ok := slots[s]; ok {
				t.Errorf("columns %q and %q share colour slot %d", other, name, s)
			}
			slots[s] = name
		}
		for _, c := range d.Columns {
			if c.Kind != k {
				t.Errorf("%s declares column %q of kind %s", k, c.Name, c.Kind)
			}
			if err := checkColumn(d.Adapter, c); err != nil {
				t.Errorf("%s: %v", k, err)
			}
			if err := results.CheckLabel("a default column's name", c.Name); err != nil {
				t.Errorf("%s: %v", k, err)
			}
		}
		if bin := d.Adapter.DefaultBinary(); len(d.Binaries) > 0 && bin != d.Binaries[0] {
			t.Errorf("%s: DefaultBinary %q is not its first binary %q", k, bin, d.Binaries[0])
		}
		if has := len(d.Binaries) > 0; has != (len(d.Packages.Debian) > 0) || has != (len(d.Packages.RHEL) > 0) {
			t.Errorf("%s: binaries %q, packages %+v: want packages for every family just when it has binaries", k, d.Binaries, d.Packages)
		}
	}
}
