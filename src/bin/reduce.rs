fn main() {
    tokenpipe_cli::run("reduce", tokenpipe_reduce::main)
}
