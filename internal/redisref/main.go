// Command redisref counts how much of lockbench outside Redis' own code
// names Redis, as issue 54 counts it: the non-test Go files outside
// redislock/ (the engine, redsync's driver and the local servers,
// localmasters, live there), check/, internal/redistest and
// internal/redisserver (one redis-server process: the protected resource's,
// which the issue lets stay with check/ and pool/, and the one Redis' local
// masters are built on) whose code lines (comments and struct tags removed)
// name "redis" or "rueidis", case-insensitive. It lists those files with
// their lines, and which core packages (plan, pool, runner, faults, lock,
// results, report, workloads, metrics, chaos) import redislock/ or its
// engine.
//
// Run it from the module's root: scripts/redis-in-core [-v] [-strict]
// (-strict excepts only what the "Done when" excepts: redislock/,
// check/ and internal/redistest, so internal/redisserver is counted).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	excepted = []string{"redislock", "check", "internal/redistest", "internal/redisserver"}
	strictEx = []string{"redislock", "check", "internal/redistest"}
	core     = []string{"plan", "pool", "runner", "faults", "lock", "results", "report", "workloads", "metrics", "chaos"}
	names    = regexp.MustCompile(`(?i)redis|rueidis`)
)

func main() {
	verbose := flag.Bool("v", false, "print each counted line")
	strict := flag.Bool("strict", false, "except only redislock/, check/ and internal/redistest")
	flag.Parse()
	skip := excepted
	if *strict {
		skip = strictEx
	}
	files, err := count(".", skip)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Printf("%-40s %d lines\n", p, len(files[p]))
		if *verbose {
			for _, l := range files[p] {
				fmt.Printf("    %s\n", l)
			}
		}
	}
	fmt.Printf("files naming redis or rueidis: %d\n", len(paths))
	imp, err := coreImports(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("core packages importing engine or redislock: %d\n", len(imp))
	for _, l := range imp {
		fmt.Printf("    %s\n", l)
	}
}

// count returns, for each counted file, its code lines that name Redis.
func count(root string, skip []string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "./"))
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			for _, s := range skip {
				if rel == s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "internal/redisref/main.go" {
			return nil
		}
		lines, err := codeLines(path)
		if err != nil {
			return err
		}
		var hits []string
		for i, l := range lines {
			if names.MatchString(l) {
				hits = append(hits, fmt.Sprintf("%d: %s", i+1, strings.TrimSpace(l)))
			}
		}
		if len(hits) > 0 {
			out[rel] = hits
		}
		return nil
	})
	return out, err
}

// codeLines returns the file's lines with its comments and struct tags
// blanked.
func codeLines(path string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	blank := func(from, to token.Pos) {
		a, b := fset.Position(from).Offset, fset.Position(to).Offset
		for i := a; i < b && i < len(src); i++ {
			if src[i] != '\n' {
				src[i] = ' '
			}
		}
	}
	for _, g := range f.Comments {
		blank(g.Pos(), g.End())
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if fl, ok := n.(*ast.Field); ok && fl.Tag != nil {
			blank(fl.Tag.Pos(), fl.Tag.End())
		}
		return true
	})
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// coreImports lists the core packages' non-test files that import engine or
// redislock (or a package under them).
func coreImports(root string) ([]string, error) {
	var out []string
	for _, c := range core {
		ms, err := filepath.Glob(filepath.Join(root, c, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if strings.HasSuffix(m, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), m, nil, parser.ImportsOnly)
			if err != nil {
				return nil, err
			}
			for _, im := range f.Imports {
				p := strings.Trim(im.Path.Value, `"`)
				if p == "lockbench/redislock/engine" || p == "lockbench/redislock" ||
					strings.HasPrefix(p, "lockbench/redislock/engine/") || strings.HasPrefix(p, "lockbench/redislock/") {
					out = append(out, filepath.ToSlash(m)+" imports "+p)
				}
			}
		}
	}
	return out, nil
}
