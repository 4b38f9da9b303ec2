python3 -c "import pathlib; pathlib.Path('a.txt').write_text('hi'); open('b.py','w').write('x')" && cargo test --quiet && go test ./... && npm test
