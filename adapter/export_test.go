package adapter

import (
	"context"
	"io"
)

// StartPiped runs Serve with open and a Client on it over in-memory
// pipes, both in this process: the protocol's own cost (codec, writers,
// hand-offs) without a process or servers. Closing the client ends Serve.
func StartPiped(ctx context.Context, opt Options, open Open) (*Client, error) {
	if len(opt.Argv) == 0 {
		opt.Argv = []string{"in-memory"}
	}
	c := newClient(opt)
	reqR, reqW := io.Pipe()
	repR, repW := io.Pipe()
	go func() {
		err := Serve(reqR, repW, open)
		repW.CloseWithError(err)
	}()
	return c.run(ctx, reqW, repR)
}
