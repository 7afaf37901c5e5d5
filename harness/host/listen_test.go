package host

import (
	"maps"
	"strings"
	"testing"
)

// A listener's accept queue is its rx_queue in /proc/net/tcp and tcp6,
// added up by port over the listeners (a proxy's threads may each have
// one on the same port); sockets that do not listen are left out.
func TestParseAcceptQueues(t *testing.T) {
	const head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	cases := []struct {
		name  string
		table string
		want  map[int]int
	}{
		// a listener on 10.0.1.1:3128 with one connection not yet taken,
		// and a connection of it, established, with bytes unread
		{"waiting", head +
			"   0: 0101000A:0C38 00000000:0000 0A 00000000:00000001 00:00000000 00000000     0        0 2746321 1 0000000000000000 100 0 0 10 0\n" +
			"   1: 0101000A:0C38 0201000A:9C40 01 00000000:00000200 00:00000000 00000000     0        0 2746322 1 0000000000000000 20 4 30 10 -1\n",
			map[int]int{3128: 1}},
		// two listeners on port 443 (SO_REUSEPORT), each with one
		// waiting, and one on 8443 with none
		{"reuseport", head +
			"   0: 0101000A:01BB 00000000:0000 0A 00000000:00000001 00:00000000 00000000     0        0 11 1 0000000000000000 100 0 0 10 0\n" +
			"   1: 0101000A:01BB 00000000:0000 0A 00000000:00000001 00:00000000 00000000     0        0 12 1 0000000000000000 100 0 0 10 0\n" +
			"   2: 0101000A:20FB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 13 1 0000000000000000 100 0 0 10 0\n",
			map[int]int{443: 2, 8443: 0}},
		// tcp6: a wildcard listener on port 80
		{"tcp6", "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
			"   0: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 14 1 0000000000000000 100 0 0 10 0\n",
			map[int]int{80: 0}},
		// no socket at all
		{"empty", head, map[int]int{}},
	}
	for _, c := range cases {
		got := map[int]int{}
		if err := parseAcceptQueues([]byte(c.table), "tcp", got); err != nil || !maps.Equal(got, c.want) {
			t.Errorf("parseAcceptQueues(%s) = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	bad := head + "   0: 0101000A:0C38 00000000:0000 0A 00000000:zz 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n"
	if err := parseAcceptQueues([]byte(bad), "tcp", map[int]int{}); err == nil || !strings.Contains(err.Error(), "tcp:2:") {
		t.Errorf("parseAcceptQueues(a bad rx_queue) = %v; want an error naming tcp:2", err)
	}
}
