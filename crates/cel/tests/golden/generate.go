//go:build ignore

// Generates the Go reference results in go_stdlib.tsv (see tests/go_golden.rs), so celer's
// conversions can be held to what cel-go does through Go's standard library.
//
//	go run generate.go doubles > doubles.out         # bits \t fmt.Sprintf("%g")
//	go run generate.go lines < inputs.tsv > out.tsv  # kind \t quoted input [\t quoted extra] \t result
//
// Kinds: float (strconv.ParseFloat), int, uint (ParseInt/ParseUint base 10), dur
// (time.ParseDuration, then the nanoseconds, FormatFloat(Seconds(), 'f', -1) + "s" and the
// Hours/Minutes/Seconds/Milliseconds totals), ts (time.Parse(time.RFC3339): Unix seconds,
// nanoseconds and RFC3339Nano in UTC), re (regexp.MatchString; extra is the text) and tz
// (civil fields of a Unix time in a zone; extra is the zone). go_stdlib.tsv holds a sample
// of these lines, prefixed "dbl" for the doubles, for hand-picked and random inputs.
package main

import (
	"bufio"
	"fmt"
	"math"
	"math/rand"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func esc(s string) string { return strconv.Quote(s) }

func main() {
	mode := os.Args[1]
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	switch mode {
	case "doubles":
		r := rand.New(rand.NewSource(42))
		for i := 0; i < 200000; i++ {
			var f float64
			switch i % 4 {
			case 0:
				f = math.Float64frombits(r.Uint64())
			case 1:
				f = r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
			case 2:
				f = float64(r.Int63n(1<<62)) / math.Pow(10, float64(r.Intn(12)))
			case 3:
				f = math.Round(r.Float64()*1e6) / 1e3
			}
			fmt.Fprintf(out, "%d\t%g\n", math.Float64bits(f), f)
		}
	case "lines":
		// stdin: kind \t input(quoted); output kind \t input \t result
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), "\t", 3)
			kind := parts[0]
			in, _ := strconv.Unquote(parts[1])
			res := ""
			switch kind {
			case "float":
				f, err := strconv.ParseFloat(in, 64)
				if err != nil {
					res = "ERR"
				} else {
					res = fmt.Sprintf("%d", math.Float64bits(f))
				}
			case "int":
				v, err := strconv.ParseInt(in, 10, 64)
				if err != nil { res = "ERR" } else { res = fmt.Sprint(v) }
			case "uint":
				v, err := strconv.ParseUint(in, 10, 64)
				if err != nil { res = "ERR" } else { res = fmt.Sprint(v) }
			case "dur":
				d, err := time.ParseDuration(in)
				if err != nil {
					res = "ERR"
				} else {
					res = fmt.Sprintf("%d %ss %d %d %d %d", int64(d), strconv.FormatFloat(d.Seconds(), 'f', -1, 64), int64(d.Hours()), int64(d.Minutes()), int64(d.Seconds()), d.Milliseconds())
				}
			case "ts":
				t, err := time.Parse(time.RFC3339, in)
				if err != nil {
					res = "ERR"
				} else {
					res = fmt.Sprintf("%d %d %s", t.Unix(), t.Nanosecond(), t.UTC().Format(time.RFC3339Nano))
				}
			case "re":
				text, _ := strconv.Unquote(parts[2])
				m, err := regexp.MatchString(in, text)
				if err != nil {
					res = "ERR"
				} else {
					res = fmt.Sprint(m)
				}
			case "tz":
				// in: unix seconds, parts[2]: zone
				secs, _ := strconv.ParseInt(in, 10, 64)
				zone, _ := strconv.Unquote(parts[2])
				loc, err := time.LoadLocation(zone)
				if err != nil {
					res = "ERR"
				} else {
					t := time.Unix(secs, 0).In(loc)
					res = fmt.Sprintf("%d %d %d %d %d %d %d %d", t.Year(), t.Month()-1, t.Day(), t.YearDay()-1, t.Weekday(), t.Hour(), t.Minute(), t.Second())
				}
			}
			if len(parts) == 3 {
				fmt.Fprintf(out, "%s\t%s\t%s\t%s\n", kind, parts[1], parts[2], res)
			} else {
				fmt.Fprintf(out, "%s\t%s\t%s\n", kind, parts[1], res)
			}
		}
	}
}
