// Command sprintf-cases prints what Go's fmt.Sprintf makes of formats and arguments of the
// four kinds OPA's sprintf hands it (int, *big.Int, float64, string), as the JSON table
// celer's Rego sprintf is tested against (crates/rego/tests/sprintf_go.json):
//
//	cd e2e && go run ./cmd/sprintf-cases > ../crates/rego/tests/sprintf_go.json
package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strconv"
)

type arg struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

type row struct {
	Format string `json:"format"`
	Args   []arg  `json:"args"`
	Want   string `json:"want"`
}

func value(a arg) any {
	switch a.Kind {
	case "int":
		n, _ := strconv.Atoi(a.Value)
		return n
	case "big":
		b, _ := new(big.Int).SetString(a.Value, 10)
		return b
	case "float":
		f, _ := strconv.ParseFloat(a.Value, 64)
		return f
	default:
		return a.Value
	}
}

func main() {
	ints := []string{"0", "1", "-1", "7", "42", "-42", "255", "1000000", "-9223372036854775808", "9223372036854775807", "65", "128512", "55296", "1114112"}
	bigs := []string{"18446744073709551616", "-98765432109876543210"}
	floats := []string{"1.5", "-1.5", "0.125", "0.375", "2.5", "3.14159265358979", "123456.789", "1234567.5", "1e21", "1e-7", "0.0001", "0.00001234", "-0.000001", "100.25", "6.02214076e23", "0.1", "99.995", "1.005", "5e-324"}
	strs := []string{"", "a", "hello", "héllo wörld", "tab\there", "quote\"back\\slash", "bell\a", "line\nbreak", "\u00a0nbsp", "emoji😀", "`tick`", "\u200bzw", "\x7f"}
	intFormats := []string{"%v", "%d", "%5d", "%-5d|", "%05d", "%+d", "% d", "%x", "%X", "%#x", "%#X", "%o", "%#o", "%O", "%b", "%#b", "%c", "%q", "%+q", "%U", "%#U", "%.3d", "%8.3d", "%-8.3d|", "%.0d", "%s", "%f", "%t", "%T", "%+v", "%#v", "%010d", "%+010d", "%x%%", "%6.2v", "%e"}
	floatFormats := []string{"%v", "%g", "%G", "%e", "%E", "%f", "%F", "%.2f", "%.0f", "%.1f", "%8.3f", "%-8.3f|", "%08.3f", "%+.3e", "%.3g", "%.10g", "%#g", "%#.3g", "%#v", "%+v", "% f", "%x", "%X", "%.2x", "%b", "%d", "%s", "%T", "%10v", "%-10v|", "%.0e", "%#.0f", "%#.0e", "%.3v", "%08v", "%+08.2f", "%.20f", "%.17g"}
	strFormats := []string{"%v", "%s", "%q", "%+q", "%#q", "%x", "%X", "% x", "%#x", "% #x", "%10s|", "%-10s|", "%010s", "%.2s", "%5.1s|", "%d", "%T", "%#v", "%+v", "%.3q", "%8q", "%c", "%-8q|", "%.0s|", "%10x|", "%-10x|", "%.1x"}
	var rows []row
	add := func(format string, args ...arg) {
		values := make([]any, len(args))
		for i, a := range args {
			values[i] = value(a)
		}
		if args == nil {
			args = []arg{}
		}
		rows = append(rows, row{format, args, fmt.Sprintf(format, values...)})
	}
	for _, f := range intFormats {
		for _, v := range ints {
			add(f, arg{"int", v})
		}
		for _, v := range bigs {
			add(f, arg{"big", v})
		}
	}
	for _, f := range floatFormats {
		for _, v := range floats {
			add(f, arg{"float", v})
		}
	}
	for _, f := range strFormats {
		for _, v := range strs {
			add(f, arg{"string", v})
		}
	}
	// Verbs without arguments, arguments without verbs, indexes, star width and precision,
	// malformed formats.
	two := []arg{{"string", "a"}, {"int", "2"}}
	for _, f := range []string{"%v and %v", "%v", "", "plain", "%v %v %v", "%[2]v %[1]v", "%[2]v", "%[3]v", "%[0]v", "%[x]v", "%[1]v %v", "%[2]*[1]v", "%*v", "%-*v|", "%.*v", "%!", "%", "abc%", "%5", "%.", "%-", "%[1]", "%%%v", "%v%%", "%ü", "%[2]5v", "%[1].2v", "%[2", "%1000001d", "%.1000001d", "%w"} {
		add(f, two...)
	}
	add("%*d", arg{"int", "-5"}, arg{"int", "3"})
	add("%*d|", arg{"int", "2000000"}, arg{"int", "3"})
	add("%.*f", arg{"int", "-1"}, arg{"float", "1.5"})
	add("%*d", arg{"string", "x"}, arg{"int", "3"})
	add("%.*d", arg{"float", "1.5"}, arg{"int", "3"})
	add("%v and %v and %v and %v and %v and %v", arg{"string", "a"}, arg{"int", "1"}, arg{"string", "b"}, arg{"int", "2"}, arg{"string", "c"})
	add("done", arg{"float", "1.5"}, arg{"big", "18446744073709551616"}, arg{"string", "x"})
	add("%d %s", arg{"string", "x"}, arg{"int", "1"})
	// One row a line, so that a change to the table reads as a diff of rows.
	fmt.Println("[")
	for i, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sep := ","
		if i == len(rows)-1 {
			sep = ""
		}
		fmt.Printf("%s%s\n", line, sep)
	}
	fmt.Println("]")
}
