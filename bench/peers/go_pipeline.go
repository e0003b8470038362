// go_pipeline.go - the peer pipeline in Go: the same 4 stages as
// bench/bench_pipeline.c's "pipeline R-row" case (source -> stage ->
// stage -> sink), one goroutine each, joined by buffered channels of 256
// frames (the capacity of subcirc's edges there), frames of R rows from
// a pool built in advance, the sink reading every row's weight. A full
// channel blocks its sender: Go's backpressure. GOMAXPROCS is set to
// --threads, so the goroutines run on as many threads as subcirc runs
// workers.
//
// usage: go_pipeline --frames N --rows R --threads T --reps K
// prints one JSON line: the median items/s (rows) of K runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"time"
)

const pool = 4096 // frames built in advance, as in C
const capacity = 256

type frame struct {
	keys    []uint64
	weights []int64
}

func buildPool(rows int) []*frame {
	p := make([]*frame, pool)
	for f := range p {
		fr := &frame{keys: make([]uint64, rows), weights: make([]int64, rows)}
		for i := 0; i < rows; i++ {
			fr.keys[i] = uint64(f*256 + i)
			fr.weights[i] = 1
		}
		p[f] = fr
	}
	return p
}

func stage(in <-chan *frame, out chan<- *frame) {
	for f := range in {
		out <- f
	}
	close(out)
}

func runOnce(p []*frame, frames uint64, rows int) float64 {
	a := make(chan *frame, capacity)
	b := make(chan *frame, capacity)
	c := make(chan *frame, capacity)
	done := make(chan int64)
	t0 := time.Now()
	go func() {
		for i := uint64(0); i < frames; i++ {
			a <- p[i%pool]
		}
		close(a)
	}()
	go stage(a, b)
	go stage(b, c)
	go func() {
		var items int64
		for f := range c {
			for _, w := range f.weights {
				items += w
			}
		}
		done <- items
	}()
	items := <-done
	secs := time.Since(t0).Seconds()
	if uint64(items) != frames*uint64(rows) {
		fmt.Fprintf(os.Stderr, "go_pipeline: %d of %d items\n", items, frames*uint64(rows))
		os.Exit(1)
	}
	return float64(items) / secs
}

func main() {
	frames := flag.Uint64("frames", 100000, "frames to send")
	rows := flag.Int("rows", 1, "rows per frame (1..256)")
	threads := flag.Int("threads", 2, "GOMAXPROCS")
	reps := flag.Int("reps", 3, "runs; the median is printed")
	flag.Parse()
	if *rows < 1 || *rows > 256 || *threads < 1 || *reps < 1 || *frames < 1 {
		fmt.Fprintln(os.Stderr, "go_pipeline: bad arguments")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*threads)
	p := buildPool(*rows)
	v := make([]float64, 0, *reps)
	for r := 0; r < *reps; r++ {
		v = append(v, runOnce(p, *frames, *rows))
	}
	sort.Float64s(v)
	fmt.Printf("{\"bench\": \"peers\", \"peer\": \"Go channels\", \"rows\": %d, \"frames\": %d, \"threads\": %d, \"unit\": \"items/s\", \"value\": %.1f}\n",
		*rows, *frames, *threads, v[len(v)/2])
}
