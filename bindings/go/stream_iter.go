//go:build go1.23

package fabric

import (
	"context"
	"errors"
	"io"
	"iter"
)

// All returns the stream's chunks as a Go 1.23 iterator:
//
//	for chunk, err := range stream.All(ctx) {
//		if err != nil {
//			return err
//		}
//		fmt.Print(chunk.Choices[0].Delta.Content)
//	}
//
// The sequence ends after the last chunk; an error (as Next returns it, never io.EOF) is
// yielded once, last. Leaving the loop early closes the stream in the background (the turn
// is not cancelled; the runtime's next turn waits for it) — call Close to wait for it.
func (s *OpenAIStream) All(ctx context.Context) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for {
			chunk, err := s.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Chunk{}, err)
				return
			}
			if !yield(chunk, nil) {
				s.closeInBackground()
				return
			}
		}
	}
}
