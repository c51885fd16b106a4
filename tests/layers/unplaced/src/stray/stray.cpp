int stray() { return 2; }
