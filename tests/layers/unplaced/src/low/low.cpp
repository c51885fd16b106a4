int low_value() { return 1; }
