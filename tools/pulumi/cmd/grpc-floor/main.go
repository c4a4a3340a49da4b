// grpc-floor is the Go floor for a plugin's start time: a bare grpc-go server, started the way a Go provider
// plugin starts, with nothing else loaded. It listens on 127.0.0.1:0, prints the port on the first line of stdout
// (the handshake the Pulumi engine reads) and serves until SIGINT or SIGTERM. `npm run bench` times spawn → port.
//
//	grpc-floor
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
)

func main() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpc-floor:", err)
		os.Exit(1)
	}
	server := grpc.NewServer()
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-stop
		server.GracefulStop()
	}()
	if err := server.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "grpc-floor:", err)
		os.Exit(1)
	}
}
