// invoke-load drives a provider plugin's Invoke the way the Pulumi engine does: grpc-go with the engine's
// own pulumirpc stubs. `npm run bench` uses it to measure the plugin without a JavaScript client's cost.
//
//	invoke-load -addr 127.0.0.1:PORT -token TOK -args '{"serviceName":"s","consumerProject":"consumer-%05d"}' -n 2000 -c 32
//
// String values in -args may hold one %d verb, replaced by the call's index modulo -distinct. Prints one JSON
// line: {"calls", "errors", "wallMs", "rps", "p50Ms", "p99Ms", "cpuMs"} (cpuMs: this process's own CPU time).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"
)

func main() {
	addr := flag.String("addr", "", "the plugin's address, host:port")
	token := flag.String("token", "", "the function token to invoke")
	argsJSON := flag.String("args", "{}", "the arguments, as a JSON object")
	n := flag.Int("n", 2000, "number of calls")
	c := flag.Int("c", 32, "calls in flight at once")
	distinct := flag.Int("distinct", 5000, "distinct argument values for %d")
	flag.Parse()

	var template map[string]any
	if err := json.Unmarshal([]byte(*argsJSON), &template); err != nil || *addr == "" || *token == "" {
		fmt.Fprintln(os.Stderr, "usage: invoke-load -addr HOST:PORT -token TOKEN -args JSON [-n N] [-c C]")
		os.Exit(2)
	}
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer conn.Close()
	client := pulumirpc.NewResourceProviderClient(conn)

	args := func(i int) *structpb.Struct {
		m := map[string]any{}
		for k, v := range template {
			if s, ok := v.(string); ok && strings.Contains(s, "%") {
				v = fmt.Sprintf(s, i%*distinct)
			}
			m[k] = v
		}
		st, err := structpb.NewStruct(m)
		if err != nil {
			panic(err)
		}
		return st
	}

	latencies := make([]time.Duration, *n)
	var next, errors int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(atomic.AddInt64(&next, 1) - 1)
				if i >= *n {
					return
				}
				t := time.Now()
				res, err := client.Invoke(context.Background(), &pulumirpc.InvokeRequest{Tok: *token, Args: args(i)})
				latencies[i] = time.Since(t)
				if err != nil || len(res.GetFailures()) > 0 {
					atomic.AddInt64(&errors, 1)
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	sort.Slice(latencies, func(a, b int) bool { return latencies[a] < latencies[b] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	cpu := time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	out, _ := json.Marshal(map[string]any{
		"calls": *n, "errors": errors, "wallMs": ms(wall), "rps": float64(*n) / wall.Seconds(),
		"p50Ms": ms(latencies[*n/2]), "p99Ms": ms(latencies[min(*n-1, *n*99/100)]), "cpuMs": ms(cpu),
	})
	fmt.Println(string(out))
}
