// The program of every module's layering check (cmake/SwitchboardModule.cmake). It does nothing: the check is
// that it links, with all of one module's code and only the modules and libraries that module declares.
int main() { return 0; }
